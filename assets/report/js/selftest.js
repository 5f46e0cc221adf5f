/* opprof report, self-test: with #selftest in the address the page visits
 * every view, checks what it drew, and writes the results as JSON into
 * <pre id="opprof-selftest">, for tests that load it in a headless browser
 * and read the DOM back. Nothing here runs otherwise. */
"use strict";
(function () {
  function rowsOf(root, sel, limit) {
    var out = [];
    var trs = root.querySelectorAll(sel + " tbody tr");
    for (var i = 0; i < trs.length && i < limit; i++) {
      var cells = [];
      for (var j = 0; j < trs[i].cells.length; j++) cells.push(trs[i].cells[j].textContent);
      out.push(cells);
    }
    return {count: trs.length, rows: out};
  }

  function timelineChecks(tl, r, tr) {
    r.colouredPixels = tl.colouredPixels();
    var times = [], n = 0, t;
    for (var i = 0; i < 12; i++) { tl.zoom(0.6, 0.37); t = performance.now(); tl.draw(); times.push(performance.now() - t); }
    for (i = 0; i < 12; i++) { tl.pan(tl.W * 0.07, 0); t = performance.now(); tl.draw(); times.push(performance.now() - t); }
    for (i = 0; i < 12; i++) { tl.zoom(1 / 0.6, 0.5); t = performance.now(); tl.draw(); times.push(performance.now() - t); }
    times.forEach(function (x) { n += x; });
    r.frames = times.length;
    r.frameAvgMs = +(n / times.length).toFixed(2);
    r.frameMaxMs = +Math.max.apply(null, times).toFixed(2);
    /* search: the most common operator name must match and be drawn */
    var ops = OP.opRows(tr, false).filter(function (x) { return x.selfCpu > 0 && x.name.indexOf("*") < 0; });
    ops.sort(function (a, b) { return b.count - a.count; });
    if (ops.length) {
      var name = ops[0].name;
      tl.setSearch(name);
      tl.draw();
      r.search = name;
      r.searchMatches = tl.search ? tl.search.count : 0;
      r.searchPixels = tl.colouredPixels();
      tl.setSearch("");
      tl.draw();
    }
    var hits = 0;
    for (var y = 30; y < tl.H; y += 8) for (var x = 0; x < tl.W; x += 16) if (tl.hit(x, y)) hits++;
    r.hits = hits;
    /* the tooltip of an event with args (else the first event): built from text nodes only */
    var ev = tr.ev, pick = 0;
    for (var i = 0; i < ev.n; i++) if (ev.args[i]) { pick = i; break; }
    if (ev.n) {
      tl.tooltip(pick, 10, 10);
      var tip = OP.byId("tooltip");
      r.tooltipElements = tip.querySelectorAll("*").length;
      r.tooltipOnlyText = tip.querySelectorAll("*:not(div):not(span)").length === 0;
      r.tooltip = tip.textContent.slice(0, 3000);
      tip.hidden = true;
    }
    /* a trace merged down: the bar says so, and a block's tooltip counts its events */
    if (tr.lod) {
      r.lodNote = OP.byId("tl-lod") ? OP.byId("tl-lod").textContent : "";
      var blocks = 0, members = 0, firstBlock = -1;
      for (i = 0; i < ev.n; i++) if (ev.merged[i]) { blocks++; members += ev.merged[i]; if (firstBlock < 0) firstBlock = i; }
      r.blocks = blocks;
      r.mergedEvents = members;
      if (firstBlock >= 0) {
        tl.tooltip(firstBlock, 10, 10);
        r.blockTooltip = OP.byId("tooltip").textContent.slice(0, 400);
        OP.byId("tooltip").hidden = true;
      }
    }
  }

  OP.selftest = function (app, firstDrawMs) {
    var res = {firstDrawMs: +firstDrawMs.toFixed(1), errors: OP.errors, views: {}};
    var k = app.trace, tr = app.meta.traces[k];
    ["overview", "operators", "timeline", "memory", "devices", "diff"].forEach(function (v) {
      if (!app.available(v, k)) return;
      var r = {}, t = performance.now();
      try {
        app.show(v, k);
        r.ms = +(performance.now() - t).toFixed(1);
        var root = app.container(v, k), obj = app.instance(v, k);
        r.shown = !root.hidden && app.view === v && app.buttons[v].className.indexOf("active") >= 0;
        var others = 0;
        for (var key in app.cache) if (app.cache[key].root !== root && !app.cache[key].root.hidden) others++;
        r.othersHidden = others === 0;
        if (v === "overview") {
          r.total = OP.byId("ov-total").textContent;
          r.top = root.querySelectorAll("#ov-top .bar-row").length;
          r.config = rowsOf(root, "#ov-config", 40).count || root.querySelectorAll("#ov-config tr").length;
          if (OP.byId("ov-lod")) r.lod = OP.byId("ov-lod").textContent;
        } else if (v === "operators") {
          var g = rowsOf(root, "#ops-table", 400);
          r.rows = g.count;
          obj.setByShape(true);
          r.byShapeRows = rowsOf(root, "#ops-table", 1).count;
          r.byShapeHeader = root.querySelector("#ops-table th[data-key=shapes]") ? 1 : 0;
          obj.setByShape(false);
          root.querySelector("#ops-table th[data-key=count]").click();
          var s = rowsOf(root, "#ops-table", 2).rows;
          r.sortedByCount = s.length < 2 || +s[0][1].replace(/,/g, "") >= +s[1][1].replace(/,/g, "");
          obj.table().sortKey = "cpu";
          obj.table().sortDesc = true;
          obj.table().render();
          if (g.rows.length) {
            obj.table().setFilter(g.rows[0][0]);
            r.filtered = rowsOf(root, "#ops-table", 1).count;
            obj.table().setFilter("");
          }
          r.list = g.rows.map(function (c) { return [c[0], c[1]]; }); /* lists last: names may hold braces */
        } else if (v === "timeline") {
          timelineChecks(obj, r, tr);
        } else if (v === "memory") {
          var d = obj.ctx.getImageData(0, 0, obj.canvas.width, obj.canvas.height).data, n = 0;
          for (var i = 0; i < d.length; i += 4) if (Math.max(d[i], d[i + 1], d[i + 2]) - Math.min(d[i], d[i + 1], d[i + 2]) > 24) n++;
          r.colouredPixels = n;
          r.peaks = rowsOf(root, "#mem-peaks", 8).rows;
        } else if (v === "devices") {
          var dv = rowsOf(root, "#dev-table", 10);
          r.rows = dv.count;
          r.streams = rowsOf(root, "#stream-table", 1).count;
          r.list = dv.rows.map(function (c) { return [c[0], c[1], c[2], c[8]]; });
        } else if (v === "diff") {
          var df = rowsOf(root, "#diff-table", 12);
          r.rows = df.count;
          r.list = df.rows.map(function (c) { return [c[0], c[1], c[2], c[3]]; });
        }
      } catch (e) {
        res.errors.push(v + ": " + e.message);
      }
      res.views[v] = r;
    });
    app.show("overview", k);
    res.images = document.images.length;
    res.scripts = document.scripts.length;
    res.title = document.title;
    res.pwned = document.documentElement.hasAttribute("data-pwned") || document.body.hasAttribute("data-pwned");
    var out = OP.el("pre", null, JSON.stringify(res));
    out.id = "opprof-selftest";
    document.body.appendChild(out);
  };
})();
