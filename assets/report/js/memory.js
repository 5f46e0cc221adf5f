/* opprof report, memory: live bytes over time per device, from each memory
 * event's total_allocated, with the peak marked and the operator that was
 * active there. Many events per pixel are drawn as that pixel's min-max. */
"use strict";
(function () {
  var PAD_L = 70, PAD_R = 16, PAD_T = 16, PAD_B = 28;
  var SERIES_COLORS = ["#2f6fd6", "#d6572f", "#2fa36b", "#8a4fd6", "#c7a21c"];

  function seriesLabel(s) { return s === 0 ? "CPU" : "GPU " + (s - 1); }

  /* Per series: its events' indices, its peak and where it happened. */
  OP.memSeries = function (tr) {
    if (tr.memSeriesCache) return tr.memSeriesCache;
    var m = tr.mem, by = {}, list = [];
    for (var i = 0; i < m.n; i++) {
      var s = m.series[i];
      if (!by[s]) { by[s] = {id: s, label: seriesLabel(s), idx: [], peak: -Infinity, at: -1, min: Infinity}; list.push(by[s]); }
      var S = by[s];
      S.idx.push(i);
      if (m.total[i] > S.peak) { S.peak = m.total[i]; S.at = i; }
      if (m.total[i] < S.min) S.min = m.total[i];
    }
    list.forEach(function (S) {
      S.idx = Uint32Array.from(S.idx);
      S.ts = new Float64Array(S.idx.length);
      for (var k = 0; k < S.idx.length; k++) S.ts[k] = m.ts[S.idx[k]];
      S.peakTs = m.ts[S.at];
      S.peakOp = m.op[S.at] ? tr.strings[tr.ev.name[m.op[S.at] - 1]] : "";
    });
    list.sort(function (a, b) { return a.id - b.id; });
    tr.memSeriesCache = list;
    return list;
  };

  OP.memPeaks = function (tr) {
    return OP.memSeries(tr).map(function (S) {
      return {label: S.label, peak: S.peak, ts: S.peakTs, op: S.peakOp};
    }).sort(function (a, b) { return b.peak - a.peak; });
  };

  function MemoryChart(root, tr) {
    var self = this;
    this.tr = tr;
    this.series = OP.memSeries(tr);
    this.t0 = tr.t0;
    this.t1 = tr.t1;
    var bar = OP.add(root, "div", "controls");
    OP.add(bar, "span", "note hint", "wheel to zoom · drag to pan · double-click to reset");
    this.info = OP.add(bar, "span", "note");
    this.wrap = OP.add(root, "div", "canvas-wrap");
    this.canvas = OP.add(this.wrap, "canvas");
    this.canvas.id = "mem-canvas";
    this.ctx = this.canvas.getContext("2d");
    var lo = 0, hi = 1;
    this.series.forEach(function (S) { hi = Math.max(hi, S.peak); lo = Math.min(lo, S.min); });
    this.ylo = lo;
    this.yhi = hi * 1.08;

    var peaks = OP.section(root, "Peak live memory");
    var kv = OP.add(peaks, "table", "grid");
    kv.id = "mem-peaks";
    var hr = OP.add(OP.add(kv, "thead"), "tr");
    ["Device", "Peak", "At", "Active operator"].forEach(function (h) { OP.add(hr, "th", null, h); });
    var tb = OP.add(kv, "tbody");
    this.series.forEach(function (S) {
      var r = OP.add(tb, "tr");
      OP.add(r, "td", null, S.label);
      OP.add(r, "td", "num", OP.fmtBytes(S.peak));
      OP.add(r, "td", "num", OP.fmtTime(S.peakTs));
      OP.add(r, "td", null, S.peakOp || "(outside any operator)");
    });
    var top = OP.section(root, "Operators by self CPU memory");
    var rows = OP.opRows(tr, false).filter(function (r) { return r.mem || r.selfMem; });
    new OP.Table(top, {columns: [
      {key: "name", label: "Name"},
      {key: "count", label: "# of Calls", num: true},
      {key: "selfMem", label: "Self CPU Mem", num: true, fmt: function (r) { return OP.fmtBytes(r.selfMem); }},
      {key: "mem", label: "CPU Mem", num: true, fmt: function (r) { return OP.fmtBytes(r.mem); }}
    ], rows: rows, sortKey: "selfMem", limit: 50});

    this.attach();
    this.resize();
    this.draw();
    void self;
  }

  MemoryChart.prototype.resize = function () {
    var dpr = window.devicePixelRatio || 1, w = Math.max(320, this.wrap.clientWidth || 800), h = 320;
    this.W = w; this.H = h; this.dpr = dpr;
    this.canvas.width = Math.round(w * dpr);
    this.canvas.height = Math.round(h * dpr);
    this.canvas.style.width = w + "px";
    this.canvas.style.height = h + "px";
  };

  MemoryChart.prototype.x = function (t) { return PAD_L + (t - this.t0) * (this.W - PAD_L - PAD_R) / (this.t1 - this.t0); };
  MemoryChart.prototype.y = function (v) {
    return this.H - PAD_B - (v - this.ylo) * (this.H - PAD_T - PAD_B) / (this.yhi - this.ylo);
  };

  /* A step line: live bytes hold until the next event. Events that share a
   * pixel column become one vertical stroke from their min to their max, so
   * the path has at most four points a column however many events. */
  MemoryChart.prototype.drawSeries = function (S, color) {
    var ctx = this.ctx, m = this.tr.mem, ts = S.ts, idx = S.idx, n = idx.length;
    if (!n) return;
    var k = Math.max(0, OP.lowerBound(ts, this.t0, 0, n) - 1), right = this.W - PAD_R;
    ctx.strokeStyle = color;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    var col = -1, lo = 0, hi = 0, last = this.y(m.total[idx[k]]), before = last;
    ctx.moveTo(PAD_L, last);
    var flush = function () {
      ctx.lineTo(col, before);
      ctx.lineTo(col, lo);
      ctx.lineTo(col, hi);
      ctx.lineTo(col, last);
    };
    for (; k < n; k++) {
      var x = Math.floor(Math.max(PAD_L, Math.min(right, this.x(ts[k])))), y = this.y(m.total[idx[k]]);
      if (x !== col) {
        if (col >= 0) flush();
        before = last;
        col = x;
        lo = hi = y;
      } else {
        if (y < lo) lo = y;
        if (y > hi) hi = y;
      }
      last = y;
      if (ts[k] > this.t1) break;
    }
    if (col >= 0) flush();
    ctx.lineTo(right, last);
    ctx.stroke();
  };

  MemoryChart.prototype.draw = function () {
    var ctx = this.ctx, W = this.W, H = this.H;
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, W, H);
    ctx.font = "11px system-ui, sans-serif";
    ctx.fillStyle = "#1d2330";
    ctx.strokeStyle = "#e6e9ee";
    ctx.lineWidth = 1;
    for (var i = 0; i <= 4; i++) {
      var v = this.ylo + (this.yhi - this.ylo) * i / 4, y = Math.round(this.y(v)) + 0.5;
      ctx.beginPath(); ctx.moveTo(PAD_L, y); ctx.lineTo(W - PAD_R, y); ctx.stroke();
      ctx.fillText(OP.fmtBytes(Math.round(v)), 4, y + 4);
    }
    for (i = 0; i <= 5; i++) {
      var t = this.t0 + (this.t1 - this.t0) * i / 5;
      ctx.fillText(OP.fmtTime(t), Math.min(this.x(t), W - 60), H - 8);
    }
    var self = this;
    ctx.save();
    ctx.beginPath();
    ctx.rect(PAD_L, PAD_T - 4, W - PAD_L - PAD_R, H - PAD_T - PAD_B + 8);
    ctx.clip();
    this.series.forEach(function (S, k) { self.drawSeries(S, SERIES_COLORS[k % SERIES_COLORS.length]); });
    this.series.forEach(function (S) {
      var x = self.x(S.peakTs), y = self.y(S.peak);
      ctx.strokeStyle = "#c62828";
      ctx.setLineDash([4, 3]);
      ctx.beginPath(); ctx.moveTo(x, PAD_T); ctx.lineTo(x, H - PAD_B); ctx.stroke();
      ctx.setLineDash([]);
      ctx.fillStyle = "#c62828";
      ctx.beginPath(); ctx.arc(x, y, 4, 0, 7); ctx.fill();
      var label = S.label + " peak " + OP.fmtBytes(S.peak) + (S.peakOp ? " · " + S.peakOp : "");
      var tw = ctx.measureText(label).width;
      ctx.fillText(label, Math.max(PAD_L + 2, Math.min(x + 6, W - PAD_R - tw - 2)), Math.max(PAD_T + 10, y - 8));
    });
    ctx.restore();
    ctx.fillStyle = "#1d2330";
    this.series.forEach(function (S, k) {
      ctx.fillStyle = SERIES_COLORS[k % SERIES_COLORS.length];
      ctx.fillRect(W - PAD_R - 90 * (k + 1), 4, 10, 10);
      ctx.fillStyle = "#1d2330";
      ctx.fillText(S.label, W - PAD_R - 90 * (k + 1) + 14, 13);
    });
  };

  MemoryChart.prototype.valueAt = function (t) {
    var best = null, m = this.tr.mem;
    this.series.forEach(function (S) {
      var k = OP.lowerBound(S.ts, t, 0, S.ts.length) - 1;
      if (k >= 0) {
        var j = S.idx[k];
        best = (best ? best + " · " : "") + S.label + " " + OP.fmtBytes(m.total[j]) +
               (m.op[j] ? " in " + this.tr.strings[this.tr.ev.name[m.op[j] - 1]] : "");
      }
    }, this);
    return best;
  };

  MemoryChart.prototype.attach = function () {
    var self = this, c = this.canvas, drag = null;
    var at = function (e) { var r = c.getBoundingClientRect(); return e.clientX - r.left; };
    var plotW = function () { return self.W - PAD_L - PAD_R; };
    c.addEventListener("wheel", function (e) {
      e.preventDefault();
      var f = Math.exp(e.deltaY * 0.003), x = (at(e) - PAD_L) / plotW(), w = self.t1 - self.t0;
      var c0 = self.t0 + w * x;
      self.t0 = c0 - (c0 - self.t0) * f;
      self.t1 = self.t0 + Math.max(20, w * f);
      self.draw();
    }, {passive: false});
    c.addEventListener("mousedown", function (e) { drag = e.clientX; });
    window.addEventListener("mouseup", function () { drag = null; });
    c.addEventListener("mousemove", function (e) {
      if (drag !== null) {
        var dt = (e.clientX - drag) * (self.t1 - self.t0) / plotW();
        self.t0 -= dt; self.t1 -= dt; drag = e.clientX;
        self.draw();
        return;
      }
      var t = self.t0 + (at(e) - PAD_L) * (self.t1 - self.t0) / plotW();
      var v = self.valueAt(t);
      self.info.textContent = v ? OP.fmtTime(t) + ": " + v : "";
    });
    c.addEventListener("dblclick", function () { self.t0 = self.tr.t0; self.t1 = self.tr.t1; self.draw(); });
  };

  OP.views.memory = {
    title: "Memory",
    available: function (tr) { return tr.mem.n > 0; },
    render: function (root, tr) { return new MemoryChart(root, tr); }
  };
})();
