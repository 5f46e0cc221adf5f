/* opprof report, operators: the key averages as a table, sortable by any
 * column, filtered by name, grouped by name or by name and input shapes. The
 * memory, FLOPs and device columns appear when the trace has them. */
"use strict";
(function () {
  function columns(rows, byShape, totals) {
    var cols = [{key: "name", label: "Name"}];
    if (byShape) cols.push({key: "shapes", label: "Input Shapes"});
    cols.push({key: "count", label: "# of Calls", num: true, fmt: function (r) { return OP.fmtInt(r.count); }});
    cols.push({key: "selfCpu", label: "Self CPU", num: true, fmt: function (r) { return OP.fmtTime(r.selfCpu); }});
    cols.push({key: "selfCpuPct", label: "Self CPU %", num: true, value: function (r) { return r.selfCpu; },
               fmt: function (r) { return OP.fmtPct(r.selfCpu, totals.selfCpu); }});
    cols.push({key: "cpu", label: "CPU total", num: true, fmt: function (r) { return OP.fmtTime(r.cpu); }});
    cols.push({key: "cpuPct", label: "CPU total %", num: true, value: function (r) { return r.cpu; },
               fmt: function (r) { return OP.fmtPct(r.cpu, totals.selfCpu); }});
    cols.push({key: "cpuAvg", label: "CPU time avg", num: true, value: function (r) { return r.cpu / r.count; },
               fmt: function (r) { return OP.fmtTime(r.cpu / r.count); }});
    if (OP.hasColumn(rows, "selfDev") || OP.hasColumn(rows, "dev")) {
      cols.push({key: "selfDev", label: "Self Device", num: true, fmt: function (r) { return OP.fmtTime(r.selfDev); }});
      cols.push({key: "selfDevPct", label: "Self Device %", num: true, value: function (r) { return r.selfDev; },
                 fmt: function (r) { return OP.fmtPct(r.selfDev, totals.selfDev); }});
      cols.push({key: "dev", label: "Device total", num: true, fmt: function (r) { return OP.fmtTime(r.dev); }});
      cols.push({key: "devAvg", label: "Device time avg", num: true, value: function (r) { return r.dev / r.count; },
                 fmt: function (r) { return OP.fmtTime(r.dev / r.count); }});
    }
    if (OP.hasColumn(rows, "mem") || OP.hasColumn(rows, "selfMem")) {
      cols.push({key: "mem", label: "CPU Mem", num: true, fmt: function (r) { return OP.fmtBytes(r.mem); }});
      cols.push({key: "selfMem", label: "Self CPU Mem", num: true, fmt: function (r) { return OP.fmtBytes(r.selfMem); }});
    }
    if (OP.hasColumn(rows, "flops")) {
      cols.push({key: "flops", label: "Total FLOPs", num: true, fmt: function (r) { return OP.fmtFlops(r.flops); }});
    }
    return cols;
  }

  function render(root, tr) {
    var state = {byShape: false};
    var bar = OP.add(root, "div", "controls");
    var filter = OP.searchField(bar, "filter by name or shapes", "ops-filter");
    var box = OP.checkbox(bar, "group by input shape", "ops-by-shape");
    if (!tr.options.shapes) box.parentNode.title = "this trace may hold no shapes: they were not recorded";
    var summary = OP.add(bar, "span", "note");
    var table = null;

    function build() {
      var rows = OP.opRows(tr, state.byShape);
      var totals = {selfCpu: OP.sum(rows, "selfCpu"), selfDev: OP.sum(rows, "selfDev")};
      var cols = columns(rows, state.byShape, totals);
      summary.textContent = "Self CPU time total: " + OP.fmtTime(totals.selfCpu) +
                            (totals.selfDev ? " · Self Device time total: " + OP.fmtTime(totals.selfDev) : "");
      if (!table) {
        table = new OP.Table(root, {columns: cols, rows: rows, sortKey: "cpu", id: "ops-table",
                                    filterKeys: ["name", "shapes"]});
      } else {
        table.columns = cols;
        table.rows = rows;
        table.render();
      }
    }
    filter.addEventListener("input", function () { table.setFilter(filter.value); });
    box.addEventListener("change", function () { state.byShape = box.checked; build(); });
    build();
    return {
      table: function () { return table; },
      setByShape: function (v) { box.checked = v; state.byShape = v; build(); }
    };
  }

  OP.views.operators = {title: "Operators", available: function () { return true; }, render: render};
})();
