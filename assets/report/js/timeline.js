/* opprof report, timeline: every thread and device stream as a flame chart
 * on one canvas. It stays fast at millions of events because it only touches
 * what is visible: events are indexed per (thread, row) in start order with
 * a running maximum of their ends, so each row finds its first visible event
 * by binary search, and events narrower than a pixel are merged by jumping
 * to the first event that starts in the next pixel. */
"use strict";
(function () {
  var ROW_H = 16, HEAD_H = 18, GAP = 6, AXIS_H = 24, LABEL_PX = 30, CHAR_W = 6.1;
  var BG = "#ffffff", HEAD_BG = "#eef1f5", DIM = "#d9dde3", TEXT = "#1d2330", GRID = "#e6e9ee";
  var DIM_INDEX = OP.PALETTE.length;

  /* The page's events are already grouped by level (a thread's row), each
   * level in start order; add offsets and maxEnd[k], the largest end among
   * the level's events up to k, so a binary search finds the first visible. */
  function mainLevels(tr) {
    var ev = tr.ev, lev = tr.levels, nL = lev.length / 3, nth = tr.threads.length;
    var off = new Uint32Array(nL + 1), base = new Uint32Array(nth), maxRow = new Int32Array(nth).fill(-1);
    for (var L = 0; L < nL; L++) {
      off[L + 1] = off[L] + lev[3 * L + 2];
      var th = lev[3 * L];
      if (lev[3 * L + 1] === 0) base[th] = L;
      if (lev[3 * L + 1] > maxRow[th]) maxRow[th] = lev[3 * L + 1];
    }
    var maxEnd = new Float64Array(ev.n), start = ev.start, dur = ev.dur;
    for (L = 0; L < nL; L++) {
      var top = -Infinity;
      for (var k = off[L]; k < off[L + 1]; k++) {
        var e = start[k] + dur[k];
        if (e > top) top = e;
        maxEnd[k] = top;
      }
    }
    return {ids: null, off: off, base: base, maxRow: maxRow, maxEnd: maxEnd};
  }

  /* The same index over the events whose name id is marked in keep. */
  function searchLevels(tr, main, keep) {
    var ev = tr.ev, names = ev.name, nL = main.off.length - 1, m = 0, k, L;
    for (k = 0; k < ev.n; k++) m += keep[names[k]];
    var ids = new Uint32Array(m), off = new Uint32Array(nL + 1), maxEnd = new Float64Array(m), j = 0;
    for (L = 0; L < nL; L++) {
      var top = -Infinity;
      for (k = main.off[L]; k < main.off[L + 1]; k++) {
        if (!keep[names[k]]) continue;
        var e = ev.start[k] + ev.dur[k];
        if (e > top) top = e;
        ids[j] = k;
        maxEnd[j++] = top;
      }
      off[L + 1] = j;
    }
    return {ids: ids, off: off, base: main.base, maxRow: main.maxRow, maxEnd: maxEnd};
  }

  function buildTracks(tr, lv) {
    var order = [];
    for (var th = 0; th < tr.threads.length; th++) if (lv.maxRow[th] >= 0) order.push(th);
    order.sort(function (a, b) {
      var x = tr.threads[a], y = tr.threads[b];
      var dx = x[4] >= 0 ? 1 : 0, dy = y[4] >= 0 ? 1 : 0;
      if (dx !== dy) return dx - dy;
      if (x[4] !== y[4]) return x[4] - y[4];
      if (x[0] !== y[0]) return x[0] - y[0];
      return x[1] - y[1];
    });
    return order.map(function (th) {
      return {th: th, label: OP.threadLabel(tr, th), levels: lv.maxRow[th] + 1, collapsed: false};
    });
  }

  function niceStep(x) {
    var p = Math.pow(10, Math.floor(Math.log10(x))), m = x / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
  }

  function Timeline(root, tr) {
    var self = this;
    this.tr = tr;
    if (!tr.tl) tr.tl = mainLevels(tr);
    this.lv = tr.tl;
    this.tracks = buildTracks(tr, this.lv);
    this.t0 = tr.t0;
    this.t1 = tr.t1;
    this.scrollY = 0;
    this.search = null;       /* {q, keep, lv, list, pos} */
    this.drawTimes = [];
    this.colorIdx = new Uint8Array(tr.strings.length).fill(255);
    this.buckets = [];
    for (var b = 0; b <= DIM_INDEX; b++) this.buckets.push({xs: new Float32Array(3 * 1024), n: 0});
    this.labels = [];
    this.pending = false;

    var bar = OP.add(root, "div", "controls");
    this.searchBox = OP.searchField(bar, "search names (Enter: next match)", "tl-search");
    var prev = OP.add(bar, "button", null, "◀");
    var next = OP.add(bar, "button", null, "▶");
    prev.title = "previous match";
    next.title = "next match";
    this.matchInfo = OP.add(bar, "span", "note");
    this.matchInfo.id = "tl-matches";
    var zin = OP.add(bar, "button", null, "+"), zout = OP.add(bar, "button", null, "−"),
        reset = OP.add(bar, "button", null, "reset");
    zin.title = "zoom in (W)";
    zout.title = "zoom out (S)";
    OP.add(bar, "span", "note hint", "drag to pan · ctrl+wheel or W/S to zoom · A/D to pan · wheel to scroll · " +
           "double-click an event to fit it · click a thread's header to fold it");
    this.range = OP.add(bar, "span", "note");
    if (tr.lod) {
      var lod = OP.add(bar, "span", "note warn", OP.lodText(tr));
      lod.id = "tl-lod";
      lod.title = "This trace has more events than a page draws at once: the short ones are merged, per level, into " +
                  "blocks that show how many they stand for. The tables count every event.";
    }
    this.wrap = OP.add(root, "div", "canvas-wrap");
    this.canvas = OP.add(this.wrap, "canvas");
    this.canvas.id = "tl-canvas";
    this.ctx = this.canvas.getContext("2d");
    if (!this.tracks.length) OP.add(root, "p", "note", "This trace has no events.");

    var searchTimer = null;
    this.searchBox.addEventListener("input", function () {
      clearTimeout(searchTimer);
      searchTimer = setTimeout(function () { self.setSearch(self.searchBox.value); }, 120);
    });
    this.searchBox.addEventListener("keydown", function (e) {
      if (e.key === "Enter") { self.setSearch(self.searchBox.value); self.gotoMatch(e.shiftKey ? -1 : 1); }
    });
    prev.addEventListener("click", function () { self.gotoMatch(-1); });
    next.addEventListener("click", function () { self.gotoMatch(1); });
    zin.addEventListener("click", function () { self.zoom(0.5, 0.5); });
    zout.addEventListener("click", function () { self.zoom(2, 0.5); });
    reset.addEventListener("click", function () { self.t0 = tr.t0; self.t1 = tr.t1; self.scrollY = 0; self.schedule(); });
    this.attachInput();
    this.resize();
    this.draw();
  }

  Timeline.prototype.trackHeight = function (t) {
    return HEAD_H + (t.collapsed ? 0 : t.levels * ROW_H) + GAP;
  };

  Timeline.prototype.contentHeight = function () {
    var h = 0;
    for (var i = 0; i < this.tracks.length; i++) h += this.trackHeight(this.tracks[i]);
    return h;
  };

  Timeline.prototype.resize = function () {
    var dpr = window.devicePixelRatio || 1;
    var w = Math.max(320, this.wrap.clientWidth || 800);
    var top = this.wrap.getBoundingClientRect().top;
    var h = Math.max(240, Math.min(window.innerHeight - top - 12, AXIS_H + this.contentHeight() + 4));
    this.W = w;
    this.H = h;
    this.dpr = dpr;
    this.canvas.width = Math.round(w * dpr);
    this.canvas.height = Math.round(h * dpr);
    this.canvas.style.width = w + "px";
    this.canvas.style.height = h + "px";
  };

  Timeline.prototype.schedule = function () {
    var self = this;
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(function () { self.pending = false; self.draw(); });
  };

  /* Rectangles are not drawn one by one: they are queued per colour and
   * filled as one path per colour at the end of the frame, which costs far
   * less than a fillRect each when hundreds of thousands are visible. */
  Timeline.prototype.colorOf = function (nameId) {
    var c = this.colorIdx[nameId];
    if (c === 255) c = this.colorIdx[nameId] = OP.colorIndex(this.tr.strings[nameId]);
    return c;
  };

  Timeline.prototype.queue = function (ci, x, y, w) {
    var b = this.buckets[ci];
    if (b.n + 3 > b.xs.length) {
      var bigger = new Float32Array(b.xs.length * 2);
      bigger.set(b.xs);
      b.xs = bigger;
    }
    b.xs[b.n++] = x;
    b.xs[b.n++] = y;
    b.xs[b.n++] = w;
  };

  Timeline.prototype.flush = function () {
    var ctx = this.ctx, h = ROW_H - 1;
    /* the dimmed background pass first, so search matches paint over it */
    for (var j = 0; j < this.buckets.length; j++) {
      var ci = (j + DIM_INDEX) % this.buckets.length, b = this.buckets[ci], xs = b.xs;
      if (!b.n) continue;
      ctx.fillStyle = ci === DIM_INDEX ? DIM : OP.PALETTE[ci];
      ctx.beginPath();
      for (var i = 0; i < b.n; i += 3) ctx.rect(xs[i], xs[i + 1], xs[i + 2], h);
      ctx.fill();
      b.n = 0;
    }
    ctx.fillStyle = TEXT;
    var L = this.labels, strs = this.tr.strings, ev = this.tr.ev;
    for (i = 0; i < L.length; i += 4) {
      var room = Math.floor((L[i + 1] - L[i] - 6) / CHAR_W), e = L[i + 3], txt = strs[ev.name[e]];
      if (room < 2) continue;
      if (ev.merged[e]) txt = OP.fmtInt(ev.merged[e]) + " merged · " + txt;
      if (txt.length > room) {
        var ns = txt.lastIndexOf("::"); /* "aten::conv2d" → "conv2d" before cutting */
        if (ns > 0 && ns + 2 < txt.length) txt = txt.slice(ns + 2);
        if (txt.length > room) txt = txt.slice(0, room - 1) + "…";
      }
      ctx.fillText(txt, L[i] + 3, L[i + 2] + 11.5);
    }
    this.labels.length = 0;
  };

  /* Queues one level's events of an index; dim: all in the dimmed colour
   * (the background pass while searching). */
  Timeline.prototype.drawLevel = function (lv, L, y, dim) {
    var ev = this.tr.ev, start = ev.start, dur = ev.dur, names = ev.name;
    var ids = lv.ids, maxEnd = lv.maxEnd, lo = lv.off[L], hi = lv.off[L + 1];
    var t0 = this.t0, t1 = this.t1, W = this.W, scale = W / (t1 - t0);
    var k = OP.lowerBound(maxEnd, t0, lo, hi);
    while (k < hi) {
      var e = ids ? ids[k] : k, s = start[e];
      if (s > t1) break;
      var x0 = (s - t0) * scale, x1 = x0 + dur[e] * scale;
      var ci = dim ? DIM_INDEX : this.colorOf(names[e]);
      if (x1 - x0 < 1) {
        var px = Math.floor(x0);
        this.queue(ci, px, y, 1);
        /* merge: jump to the first event starting in a later pixel; the one
         * just before it may still reach past this pixel, so keep it */
        var tNext = t0 + (px + 1) / scale, a = k + 1, b = hi;
        if (ids) { while (a < b) { var mid = (a + b) >>> 1; if (start[ids[mid]] < tNext) a = mid + 1; else b = mid; } }
        else a = OP.lowerBound(start, tNext, a, b);
        var last = ids ? ids[a - 1] : a - 1;
        k = (a - 1 > k && start[last] + dur[last] > tNext) ? a - 1 : a;
        continue;
      }
      var xa = x0 < 0 ? 0 : x0, xb = x1 > W ? W : x1;
      this.queue(ci, xa, y, Math.max(1, xb - xa - 0.5));
      if (xb - xa >= LABEL_PX && !dim) this.labels.push(xa, xb, y, e);
      k++;
    }
  };

  Timeline.prototype.draw = function () {
    var t = performance.now();
    var ctx = this.ctx, W = this.W, H = this.H;
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.fillStyle = BG;
    ctx.fillRect(0, 0, W, H);
    ctx.font = "11px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace";
    ctx.textBaseline = "alphabetic";
    var step = niceStep((this.t1 - this.t0) * 110 / W), scale = W / (this.t1 - this.t0);
    var first = Math.ceil(this.t0 / step) * step, x;
    ctx.fillStyle = GRID;
    for (var g = first; g <= this.t1; g += step) { x = Math.round((g - this.t0) * scale); ctx.fillRect(x, AXIS_H, 1, H); }
    var y = AXIS_H - this.scrollY, lv = this.lv, sl = this.search;
    for (var i = 0; i < this.tracks.length; i++) {
      var tk = this.tracks[i], th = this.trackHeight(tk);
      if (y + th < AXIS_H) { y += th; continue; }
      if (y > H) break;
      ctx.fillStyle = HEAD_BG;
      ctx.fillRect(0, y, W, HEAD_H);
      ctx.fillStyle = TEXT;
      ctx.fillText((tk.collapsed ? "▸ " : "▾ ") + tk.label, 6, y + 13);
      if (!tk.collapsed) {
        for (var r = 0; r < tk.levels; r++) {
          var ly = y + HEAD_H + r * ROW_H;
          if (ly + ROW_H < AXIS_H || ly > H) continue;
          this.drawLevel(lv, lv.base[tk.th] + r, ly, !!sl);
          if (sl) this.drawLevel(sl.lv, sl.lv.base[tk.th] + r, ly, false);
        }
      }
      y += th;
    }
    this.flush();
    ctx.fillStyle = BG;
    ctx.fillRect(0, 0, W, AXIS_H);
    ctx.fillStyle = "#9aa3af";
    ctx.fillRect(0, AXIS_H - 1, W, 1);
    ctx.fillStyle = TEXT;
    for (g = first; g <= this.t1; g += step) {
      x = Math.round((g - this.t0) * scale);
      ctx.fillRect(x, AXIS_H - 6, 1, 6);
      ctx.fillText(OP.fmtTick(g, step), x + 3, 14);
    }
    this.range.textContent = "view " + OP.fmtTime(this.t0) + " – " + OP.fmtTime(this.t1) +
                             " (" + OP.fmtTime(this.t1 - this.t0) + ")";
    this.drawTimes.push(performance.now() - t);
  };

  Timeline.prototype.clampView = function () {
    var span = this.tr.t1 - this.tr.t0, w = this.t1 - this.t0;
    if (w < 20) { var c = (this.t0 + this.t1) / 2; this.t0 = c - 10; this.t1 = c + 10; w = 20; }
    if (w > span * 1.2) { this.t0 = this.tr.t0 - span * 0.1; this.t1 = this.tr.t1 + span * 0.1; return; }
    var lo = this.tr.t0 - span * 0.1, hi = this.tr.t1 + span * 0.1;
    if (this.t0 < lo) { this.t1 += lo - this.t0; this.t0 = lo; }
    if (this.t1 > hi) { this.t0 -= this.t1 - hi; this.t1 = hi; }
    var maxScroll = Math.max(0, AXIS_H + this.contentHeight() - this.H);
    this.scrollY = Math.max(0, Math.min(this.scrollY, maxScroll));
  };

  /* Zooms by factor around a point given as a fraction of the width. */
  Timeline.prototype.zoom = function (factor, at) {
    var w = this.t1 - this.t0, c = this.t0 + w * at;
    this.t0 = c - (c - this.t0) * factor;
    this.t1 = this.t0 + w * factor;
    this.clampView();
    this.schedule();
  };

  Timeline.prototype.pan = function (dx, dy) {
    var w = this.t1 - this.t0;
    this.t0 -= dx * w / this.W;
    this.t1 -= dx * w / this.W;
    this.scrollY -= dy;
    this.clampView();
    this.schedule();
  };

  /* The event under (mx, my) in canvas pixels, or a track header. */
  Timeline.prototype.hit = function (mx, my) {
    if (my < AXIS_H) return null;
    var y = AXIS_H - this.scrollY, lv = this.lv, ev = this.tr.ev;
    for (var i = 0; i < this.tracks.length; i++) {
      var tk = this.tracks[i], h = this.trackHeight(tk);
      if (my >= y && my < y + h) {
        if (my < y + HEAD_H) return {track: tk};
        var r = Math.floor((my - y - HEAD_H) / ROW_H);
        if (tk.collapsed || r >= tk.levels) return null;
        var L = lv.base[tk.th] + r, scale = this.W / (this.t1 - this.t0);
        var t = this.t0 + mx / scale, tol = 2 / scale, hi = lv.off[L + 1];
        var k = OP.lowerBound(lv.maxEnd, t - tol, lv.off[L], hi), best = -1, bestD = Infinity;
        for (var n = 0; k < hi && n < 2000; k++, n++) {
          var e = lv.ids ? lv.ids[k] : k, s = ev.start[e];
          if (s > t + tol) break;
          var d = t < s ? s - t : t > s + ev.dur[e] ? t - s - ev.dur[e] : 0;
          if (d <= tol && d < bestD) { best = e; bestD = d; if (!d) break; }
        }
        return best >= 0 ? {event: best} : null;
      }
      y += h;
    }
    return null;
  };

  /* An event's lines. */
  function eventTip(tr, e, line, tip) {
    var ev = tr.ev, s = tr.strings;
    line("category", OP.CATS[ev.cat[e]] || "other");
    line("duration", OP.fmtTime(ev.dur[e]));
    if (!OP.isDeviceCat(ev.cat[e])) line("self", OP.fmtTime(ev.self[e]));
    line("start", OP.fmtTime(ev.start[e]));
    line("thread", OP.threadLabel(tr, ev.thread[e]));
    line("input shapes", s[ev.shapes[e]]);
    line("input types", s[ev.types[e]]);
    if (ev.flops && ev.flops[e]) line("FLOPs", OP.fmtFlops(ev.flops[e]));
    if (ev.mem && ev.mem[e]) line("CPU memory", OP.fmtBytes(ev.mem[e]));
    if (ev.dev && ev.dev[e] && !OP.isDeviceCat(ev.cat[e])) line("device time", OP.fmtTime(ev.dev[e]));
    if (ev.launch && ev.launch[e]) line("launched by", s[ev.name[ev.launch[e] - 1]]);
    if (ev.stack && ev.stack[e] && tr.stacks[ev.stack[e] - 1]) {
      var frames = tr.stacks[ev.stack[e] - 1];
      var shown = frames.slice(0, 12).map(function (f) { return s[f]; });
      if (frames.length > 12) shown.push("… " + (frames.length - 12) + " more");
      var st = OP.add(tip, "div", "tip-line");
      OP.add(st, "span", "tip-key", "call stack");
      shown.forEach(function (f) { OP.add(st, "div", "tip-frame", f); });
    }
    if (s[ev.args[e]]) {
      var args = s[ev.args[e]];
      line("args", args.length > 600 ? args.slice(0, 600) + "…" : args);
    }
  }

  /* A block of merged events: what it stands for, and the sums of its
   * members. */
  function blockTip(tr, e, line) {
    var ev = tr.ev, s = tr.strings;
    line("longest", s[ev.name[e]] + " (" + (OP.CATS[ev.cat[e]] || "other") + ")");
    line("span", OP.fmtTime(ev.dur[e]));
    line("busy", OP.fmtTime(ev.self[e]));
    line("start", OP.fmtTime(ev.start[e]));
    line("thread", OP.threadLabel(tr, ev.thread[e]));
    if (ev.flops && ev.flops[e]) line("FLOPs", OP.fmtFlops(ev.flops[e]));
    if (ev.mem && ev.mem[e]) line("CPU memory", OP.fmtBytes(ev.mem[e]));
    if (ev.dev && ev.dev[e]) line("device time", OP.fmtTime(ev.dev[e]));
  }

  Timeline.prototype.tooltip = function (e, cx, cy) {
    var tip = OP.byId("tooltip"), tr = this.tr, ev = tr.ev;
    OP.clear(tip);
    var line = function (k, v) {
      if (v === "" || v === undefined || v === null) return;
      var d = OP.add(tip, "div", "tip-line");
      OP.add(d, "span", "tip-key", k + " ");
      OP.add(d, "span", null, v);
    };
    if (ev.merged[e]) {
      OP.add(tip, "div", "tip-name", OP.fmtInt(ev.merged[e]) + " events merged (each shorter than " +
             OP.fmtTime(tr.lod.minNs) + ")");
      blockTip(tr, e, line);
    } else {
      OP.add(tip, "div", "tip-name", tr.strings[ev.name[e]]);
      eventTip(tr, e, line, tip);
    }
    tip.hidden = false;
    var w = tip.offsetWidth, h = tip.offsetHeight;
    tip.style.left = Math.min(cx + 14, window.innerWidth - w - 8) + "px";
    tip.style.top = (cy + 16 + h > window.innerHeight ? cy - h - 8 : cy + 16) + "px";
  };

  Timeline.prototype.attachInput = function () {
    var self = this, c = this.canvas, drag = null;
    var pos = function (e) { var r = c.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; };
    c.addEventListener("wheel", function (e) {
      e.preventDefault();
      var p = pos(e);
      if (e.ctrlKey || e.metaKey) self.zoom(Math.exp(e.deltaY * 0.003), p[0] / self.W);
      else if (Math.abs(e.deltaX) > Math.abs(e.deltaY) || e.shiftKey) self.pan(-(e.deltaX || e.deltaY), 0);
      else self.pan(0, -e.deltaY);
    }, {passive: false});
    c.addEventListener("mousedown", function (e) { drag = {x: e.clientX, y: e.clientY, moved: false}; });
    window.addEventListener("mouseup", function (e) {
      if (drag && !drag.moved && e.target === c) {
        var p = pos(e), h = self.hit(p[0], p[1]);
        if (h && h.track) { h.track.collapsed = !h.track.collapsed; self.resize(); self.clampView(); self.schedule(); }
      }
      drag = null;
    });
    window.addEventListener("mousemove", function (e) {
      if (drag) {
        var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 2) drag.moved = true;
        drag.x = e.clientX;
        drag.y = e.clientY;
        self.pan(dx, dy);
        OP.byId("tooltip").hidden = true;
        return;
      }
      if (e.target !== c) return;
      var p = pos(e), h = self.hit(p[0], p[1]);
      if (h && h.event !== undefined) self.tooltip(h.event, e.clientX, e.clientY);
      else OP.byId("tooltip").hidden = true;
    });
    c.addEventListener("mouseleave", function () { OP.byId("tooltip").hidden = true; });
    c.addEventListener("dblclick", function (e) {
      var p = pos(e), h = self.hit(p[0], p[1]);
      if (h && h.event !== undefined) self.fit(h.event);
    });
    window.addEventListener("keydown", function (e) {
      if (!c.isConnected || c.offsetParent === null || e.target.tagName === "INPUT") return;
      var k = e.key.toLowerCase();
      if (k === "w") self.zoom(0.8, 0.5);
      else if (k === "s") self.zoom(1.25, 0.5);
      else if (k === "a") self.pan(self.W * 0.15, 0);
      else if (k === "d") self.pan(-self.W * 0.15, 0);
    });
    window.addEventListener("resize", function () {
      if (!c.isConnected) return;
      self.resize();
      self.schedule();
    });
  };

  /* Shows event e: its span with a margin, and its thread scrolled into view. */
  Timeline.prototype.fit = function (e) {
    var ev = this.tr.ev, d = Math.max(ev.dur[e], 50);
    this.t0 = ev.start[e] - d * 0.25;
    this.t1 = ev.start[e] + d * 1.25;
    var y = 0;
    for (var i = 0; i < this.tracks.length; i++) {
      var tk = this.tracks[i];
      if (tk.th === ev.thread[e]) {
        tk.collapsed = false;
        var want = y + HEAD_H + ev.row[e] * ROW_H;
        if (want < this.scrollY || want > this.scrollY + this.H - AXIS_H - ROW_H) this.scrollY = want - 40;
        break;
      }
      y += this.trackHeight(tk);
    }
    this.clampView();
    this.schedule();
  };

  Timeline.prototype.setSearch = function (q) {
    q = q.trim().toLowerCase();
    if (this.search && this.search.q === q) return;
    if (!q) { this.search = null; this.matchInfo.textContent = ""; this.schedule(); return; }
    var strs = this.tr.strings, keep = new Uint8Array(strs.length), ev = this.tr.ev;
    for (var i = 0; i < strs.length; i++) if (strs[i].toLowerCase().indexOf(q) >= 0) keep[i] = 1;
    var lv = searchLevels(this.tr, this.lv, keep);
    this.search = {q: q, keep: keep, lv: lv, count: lv.ids.length, pos: -1};
    this.matchInfo.textContent = OP.fmtInt(lv.ids.length) + " matches";
    void ev;
    this.schedule();
  };

  Timeline.prototype.gotoMatch = function (dir) {
    var s = this.search;
    if (!s || !s.count) return;
    if (!s.list) {
      var start = this.tr.ev.start;
      s.list = s.lv.ids.slice().sort(function (a, b) { return start[a] - start[b] || a - b; });
    }
    s.pos = (s.pos + dir + s.count) % s.count;
    this.matchInfo.textContent = "match " + OP.fmtInt(s.pos + 1) + " of " + OP.fmtInt(s.count);
    this.fit(s.list[s.pos]);
  };

  /* For the self-test: pixels in a saturated colour, i.e. drawn events (the
   * background, headers, grid and text are all grey). */
  Timeline.prototype.colouredPixels = function () {
    var d = this.ctx.getImageData(0, 0, this.canvas.width, this.canvas.height).data, n = 0;
    for (var i = 0; i < d.length; i += 4) {
      var mx = Math.max(d[i], d[i + 1], d[i + 2]), mn = Math.min(d[i], d[i + 1], d[i + 2]);
      if (mx - mn > 24) n++;
    }
    return n;
  };

  OP.views.timeline = {
    title: "Timeline",
    available: function () { return true; },
    render: function (root, tr) { return new Timeline(root, tr); }
  };
  OP.Timeline = Timeline;
})();
