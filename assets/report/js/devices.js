/* opprof report, devices: kernels, copies and memsets grouped by name, each
 * with the host operators that launched it, and each stream's busy time. */
"use strict";
(function () {
  var KIND = {4: "kernel", 5: "memcpy", 6: "memset"};

  function render(root, tr) {
    var rows = tr.devices.kernels.map(function (k) {
      return {name: k[0], kind: KIND[k[1]] || "other", count: k[2], total: k[3], min: k[4], max: k[5],
              launchers: k[6].map(function (l) { return (l[0] || "(no launching operator)") + " ×" + l[1]; }).join(", ")};
    });
    var total = OP.sum(rows, "total");
    var bar = OP.add(root, "div", "controls");
    var filter = OP.searchField(bar, "filter by name or operator", "dev-filter");
    OP.add(bar, "span", "note", "Device time total: " + OP.fmtTime(total));
    var sec = OP.section(root, "Kernels, copies and memsets");
    var table = new OP.Table(sec, {id: "dev-table", sortKey: "total", rows: rows, filterKeys: ["name", "launchers", "kind"],
      columns: [
        {key: "name", label: "Name"},
        {key: "kind", label: "Kind"},
        {key: "count", label: "# of Calls", num: true, fmt: function (r) { return OP.fmtInt(r.count); }},
        {key: "total", label: "Total", num: true, fmt: function (r) { return OP.fmtTime(r.total); }},
        {key: "pct", label: "%", num: true, value: function (r) { return r.total; },
         fmt: function (r) { return OP.fmtPct(r.total, total); }},
        {key: "avg", label: "Avg", num: true, value: function (r) { return r.total / r.count; },
         fmt: function (r) { return OP.fmtTime(r.total / r.count); }},
        {key: "min", label: "Min", num: true, fmt: function (r) { return OP.fmtTime(r.min); }},
        {key: "max", label: "Max", num: true, fmt: function (r) { return OP.fmtTime(r.max); }},
        {key: "launchers", label: "Launched by (top operators by time)"}
      ]});
    filter.addEventListener("input", function () { table.setFilter(filter.value); });

    /* streams: busy time = the sum of their activities' durations */
    var ev = tr.ev, per = {};
    for (var i = 0; i < ev.n; i++) {
      if (!OP.isDeviceCat(ev.cat[i])) continue;
      var th = ev.thread[i], s = per[th] || (per[th] = {count: 0, busy: 0, first: Infinity, last: -Infinity});
      /* a block of merged activities counts its members and their busy time */
      s.count += ev.merged[i] || 1;
      s.busy += ev.merged[i] ? ev.self[i] : ev.dur[i];
      if (ev.start[i] < s.first) s.first = ev.start[i];
      if (ev.start[i] + ev.dur[i] > s.last) s.last = ev.start[i] + ev.dur[i];
    }
    var streams = Object.keys(per).map(function (th) {
      var s = per[th];
      return {name: OP.threadLabel(tr, +th), count: s.count, busy: s.busy, span: s.last - s.first,
              util: s.last > s.first ? s.busy / (s.last - s.first) : 0};
    });
    var ss = OP.section(root, "Streams");
    new OP.Table(ss, {id: "stream-table", sortKey: "busy", rows: streams, columns: [
      {key: "name", label: "Stream"},
      {key: "count", label: "Activities", num: true, fmt: function (r) { return OP.fmtInt(r.count); }},
      {key: "busy", label: "Busy", num: true, fmt: function (r) { return OP.fmtTime(r.busy); }},
      {key: "span", label: "First to last", num: true, fmt: function (r) { return OP.fmtTime(r.span); }},
      {key: "util", label: "Busy %", num: true, fmt: function (r) { return (100 * r.util).toFixed(1) + "%"; }}
    ]});
  }

  OP.views.devices = {
    title: "Devices",
    available: function (tr) { return tr.nDevice > 0; },
    render: render
  };
})();
