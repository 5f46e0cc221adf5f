/* opprof report, overview: the run at a glance: total time, steps, the top
 * operators, what was dropped, and the configuration that produced it. */
"use strict";
(function () {
  function barList(parent, items, fmt, max) {
    var list = OP.add(parent, "div", "bars");
    items.forEach(function (it) {
      var row = OP.add(list, "div", "bar-row");
      OP.add(row, "div", "bar-label", it.label).title = it.label;
      var track = OP.add(row, "div", "bar-track");
      var bar = OP.add(track, "div", "bar");
      bar.style.width = (max > 0 ? Math.max(0.5, 100 * it.value / max) : 0).toFixed(2) + "%";
      bar.style.background = OP.PALETTE[OP.colorIndex(it.label)];
      OP.add(row, "div", "bar-value", fmt(it.value));
    });
    return list;
  }

  function yesNo(v) { return v ? "yes" : "no"; }

  function render(root, tr, meta) {
    var rows = OP.opRows(tr, false);
    var hostRows = rows.filter(function (r) { return r.cpu > 0 || r.selfCpu > 0; });
    var cards = OP.add(root, "div", "cards");
    OP.card(cards, "Total time", OP.fmtTime(tr.span), "ov-total");
    OP.card(cards, "Events", OP.fmtInt(tr.nev));
    var has = OP.contents(tr);
    OP.card(cards, "Threads", String(has.hostThreads));
    if (has.streams) OP.card(cards, "Device streams", String(has.streams));
    OP.card(cards, "Self CPU total", OP.fmtTime(OP.sum(rows, "selfCpu")));
    var devTotal = 0;
    rows.forEach(function (r) { if (r.cpu === 0 && r.selfCpu === 0) devTotal += r.selfDev; });
    if (tr.nDevice) OP.card(cards, "Device time total", OP.fmtTime(devTotal));
    /* attempted counts every record the capture was asked for, memory events too */
    var dropped = OP.card(cards, "Dropped events", tr.attempted ? OP.fmtInt(tr.dropped) + " of " +
                          OP.fmtInt(tr.attempted) + " attempted" : OP.fmtInt(tr.dropped), "ov-dropped");
    if (tr.dropped) dropped.className += " warn";
    var steps = OP.stepsOf(tr);
    if (steps.length) {
      var sum = 0;
      steps.forEach(function (s) { sum += s.dur; });
      OP.card(cards, "Steps", steps.length + " · avg " + OP.fmtTime(sum / steps.length));
    }
    if (tr.mem.n) {
      var peaks = OP.memPeaks(tr);
      if (peaks.length) OP.card(cards, "Peak memory", OP.fmtBytes(peaks[0].peak) + (peaks[0].op ? " in " + peaks[0].op : ""));
    }
    var flops = OP.sum(rows, "flops");
    if (flops) OP.card(cards, "Total FLOPs", OP.fmtFlops(flops));
    if (tr.lod) OP.card(cards, "Merged on the timeline", OP.lodText(tr), "ov-lod");
    if (tr.options.incomplete) OP.card(cards, "Incomplete", "written after a signal or truncated").className += " warn";

    var grid = OP.add(root, "div", "two-col");
    if (steps.length) {
      var sp = OP.section(grid, "Time per step");
      var maxStep = 0;
      steps.forEach(function (s) { if (s.dur > maxStep) maxStep = s.dur; });
      barList(sp, steps.slice(0, 200).map(function (s) { return {label: s.name, value: s.dur}; }), OP.fmtTime, maxStep);
      if (steps.length > 200) OP.add(sp, "p", "note", steps.length - 200 + " more steps not shown");
    }
    var tp = OP.section(grid, "Top operators by self CPU time");
    var top = hostRows.slice().sort(function (a, b) { return b.selfCpu - a.selfCpu; }).slice(0, 10);
    var topMax = top.length ? top[0].selfCpu : 0;
    barList(tp, top.map(function (r) { return {label: r.name, value: r.selfCpu}; }), OP.fmtTime, topMax).id = "ov-top";
    if (!top.length) OP.add(tp, "p", "note", "No host operators in this trace.");
    if (tr.nDevice) {
      var dp = OP.section(grid, "Top device activity by time");
      var k = tr.devices.kernels.slice().sort(function (a, b) { return b[3] - a[3]; }).slice(0, 10);
      barList(dp, k.map(function (r) { return {label: r[0], value: r[3]}; }), OP.fmtTime, k.length ? k[0][3] : 0);
    }

    var cp = OP.section(grid, "Configuration");
    var kv = OP.add(cp, "table", "kv");
    kv.id = "ov-config";
    var put = function (k, v) {
      var r = OP.add(kv, "tr");
      OP.add(r, "th", null, k);
      OP.add(r, "td", null, v);
    };
    put("trace", tr.label);
    meta.config.forEach(function (p) { put(p[0], p[1]); });
    put("input shapes", yesNo(has.shapes));
    put("memory", yesNo(has.memory));
    put("FLOPs", yesNo(has.flops));
    put("stacks", yesNo(tr.options.stack));
    put("device activity", yesNo(tr.nDevice > 0));
    if (tr.stepNum >= 0) put("step number", String(tr.stepNum));
    var base = Number(tr.baseTimeNs);
    if (base > 0) put("started", new Date(base / 1e6).toISOString());
    put("memory events", OP.fmtInt(tr.nmem));
    if (tr.memUnknownFrees || tr.memDoubleFrees || tr.memReallocs) {
      put("frees of unknown blocks", OP.fmtInt(tr.memUnknownFrees));
      put("double frees", OP.fmtInt(tr.memDoubleFrees));
      put("reallocs", OP.fmtInt(tr.memReallocs));
    }
    put("report written by", meta.generator + ", " + new Date(meta.created * 1000).toISOString());
  }

  OP.views.overview = {title: "Overview", available: function () { return true; }, render: render};
})();
