/* opprof report, diff: the second trace against the first, as `opprof diff`
 * computes it: key-average rows matched by name (and input shapes with the
 * toggle), ordered by the absolute change of self CPU time, largest first,
 * ties by name; the totals pinned on top. */
"use strict";
(function () {
  var KEYS = ["count", "selfCpu", "cpu", "selfDev", "dev"];

  function byteOrder(a, b) { return a < b ? -1 : a > b ? 1 : 0; }

  OP.diffRows = function (base, test, byShape) {
    var map = new Map(), rows = [];
    var put = function (tr, side) {
      OP.opRows(tr, byShape).forEach(function (r) {
        var key = byShape ? r.name + "\u0000" + r.shapes : r.name, d = map.get(key);
        if (!d) {
          d = {name: r.name, shapes: r.shapes};
          KEYS.forEach(function (k) { d[k + "A"] = 0; d[k + "B"] = 0; });
          map.set(key, d);
          rows.push(d);
        }
        KEYS.forEach(function (k) { d[k + side] += r[k]; });
      });
    };
    put(base, "A");
    put(test, "B");
    rows.forEach(function (d) { KEYS.forEach(function (k) { d[k + "D"] = d[k + "B"] - d[k + "A"]; }); });
    rows.sort(function (a, b) {
      return Math.abs(b.selfCpuD) - Math.abs(a.selfCpuD) || byteOrder(a.name, b.name) || byteOrder(a.shapes, b.shapes);
    });
    return rows;
  };

  function pct(a, b) {
    if (!a) return b ? "new" : "";
    return OP.fmtSigned(100 * (b - a) / a, function (v) { return v.toFixed(1); }) + "%";
  }

  function columns(byShape, hasDev) {
    var cols = [{key: "name", label: "Name"}];
    if (byShape) cols.push({key: "shapes", label: "Input Shapes"});
    cols.push({key: "countA", label: "Calls (base)", num: true, fmt: function (r) { return OP.fmtInt(r.countA); }},
              {key: "countB", label: "Calls (test)", num: true, fmt: function (r) { return OP.fmtInt(r.countB); }},
              {key: "countD", label: "Δ Calls", num: true, fmt: function (r) { return OP.fmtSigned(r.countD, OP.fmtInt); }});
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
    return cols;
  }

  function render(root, tr, meta) {
    var base = meta.traces[0], test = meta.traces[1], table = null;
    var bar = OP.add(root, "div", "controls");
    var filter = OP.searchField(bar, "filter by name", "diff-filter");
    var box = OP.checkbox(bar, "match by input shapes", "diff-by-shape");
    OP.add(bar, "span", "note", "base: " + base.label + " · test: " + test.label + " · Δ = test − base");
    function build() {
      var byShape = box.checked, rows = OP.diffRows(base, test, byShape), totals = {name: "Total", shapes: ""};
      KEYS.forEach(function (k) {
        ["A", "B", "D"].forEach(function (s) { totals[k + s] = OP.sum(rows, k + s); });
      });
      var cols = columns(byShape, totals.selfDevA || totals.selfDevB);
      if (!table) {
        table = new OP.Table(root, {id: "diff-table", rows: rows, columns: cols, pinned: totals,
                                    filterKeys: ["name", "shapes"]});
      } else {
        table.columns = cols;
        table.rows = rows;
        table.pinned = totals;
        table.sortKey = null;
        table.render();
      }
    }
    filter.addEventListener("input", function () { table.setFilter(filter.value); });
    box.addEventListener("change", build);
    build();
    void tr;
  }

  OP.views.diff = {
    title: "Diff",
    available: function (tr, meta) { return meta.traces.length > 1; },
    render: render
  };
})();
