/* opprof report, diff: the second trace against the first, per operator
 * name: change in calls, self and total CPU time and device time, sorted by
 * the largest absolute change of self time, with the totals pinned on top. */
"use strict";
(function () {
  var KEYS = ["count", "selfCpu", "cpu", "selfDev", "dev"];

  OP.diffRows = function (base, test) {
    var map = {}, rows = [];
    var put = function (tr, side) {
      OP.opRows(tr, false).forEach(function (r) {
        var d = map[r.name];
        if (!d) {
          d = map[r.name] = {name: r.name};
          KEYS.forEach(function (k) { d[k + "A"] = 0; d[k + "B"] = 0; });
          rows.push(d);
        }
        KEYS.forEach(function (k) { d[k + side] += r[k]; });
      });
    };
    put(base, "A");
    put(test, "B");
    rows.forEach(function (d) { KEYS.forEach(function (k) { d[k + "D"] = d[k + "B"] - d[k + "A"]; }); });
    rows.sort(function (a, b) {
      return (Math.abs(b.selfCpuD) + Math.abs(b.selfDevD)) - (Math.abs(a.selfCpuD) + Math.abs(a.selfDevD));
    });
    return rows;
  };

  function pct(a, b) {
    if (!a) return b ? "new" : "";
    return OP.fmtSigned(100 * (b - a) / a, function (v) { return v.toFixed(1); }) + "%";
  }

  function render(root, tr, meta) {
    var base = meta.traces[0], test = meta.traces[1];
    var rows = OP.diffRows(base, test);
    var totals = {name: "Total"};
    KEYS.forEach(function (k) {
      ["A", "B", "D"].forEach(function (s) { totals[k + s] = OP.sum(rows, k + s); });
    });
    var hasDev = totals.selfDevA || totals.selfDevB;
    var bar = OP.add(root, "div", "controls");
    var filter = OP.add(bar, "input");
    filter.type = "search";
    filter.placeholder = "filter by name";
    OP.add(bar, "span", "note", "base: " + base.label + " · test: " + test.label + " · Δ = test − base");
    var cols = [{key: "name", label: "Name"},
      {key: "countA", label: "Calls (base)", num: true, fmt: function (r) { return OP.fmtInt(r.countA); }},
      {key: "countB", label: "Calls (test)", num: true, fmt: function (r) { return OP.fmtInt(r.countB); }},
      {key: "countD", label: "Δ Calls", num: true, fmt: function (r) { return OP.fmtSigned(r.countD, OP.fmtInt); }}];
    var timeCols = function (k, label) {
      var t = OP.fmtTime;
      cols.push({key: k + "A", label: label + " (base)", num: true, fmt: function (r) { return t(r[k + "A"]); }});
      cols.push({key: k + "B", label: label + " (test)", num: true, fmt: function (r) { return t(r[k + "B"]); }});
      cols.push({key: k + "D", label: "Δ " + label, num: true, value: function (r) { return r[k + "D"]; },
                 fmt: function (r) { return OP.fmtSigned(r[k + "D"], t); }});
      cols.push({key: k + "P", label: "Δ%", num: true, value: function (r) { return r[k + "A"] ? r[k + "D"] / r[k + "A"] : 0; },
                 fmt: function (r) { return pct(r[k + "A"], r[k + "B"]); }});
    };
    timeCols("selfCpu", "Self CPU");
    timeCols("cpu", "CPU total");
    if (hasDev) { timeCols("selfDev", "Self Device"); timeCols("dev", "Device total"); }
    var table = new OP.Table(root, {id: "diff-table", rows: rows, columns: cols, pinned: totals});
    filter.addEventListener("input", function () { table.setFilter(filter.value); });
    void tr;
  }

  OP.views.diff = {
    title: "Diff",
    available: function (tr, meta) { return meta.traces.length > 1; },
    render: render
  };
})();
