/* opprof report, data: the inert blocks the C side wrote (a JSON meta
 * object, per trace a JSON string table and base64 varint columns) decoded
 * into typed arrays. */
"use strict";
(function () {
  function base64Bytes(text) {
    text = text.replace(/\s+/g, "");
    if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(text);
    var bin = atob(text), n = bin.length, out = new Uint8Array(n);
    for (var i = 0; i < n; i++) out[i] = bin.charCodeAt(i);
    return out;
  }

  var TYPES = {f64: Float64Array, u32: Uint32Array, u16: Uint16Array, u8: Uint8Array};

  /* n LEB128 varints from bytes[pos..]: "u" as they are, "z" zigzag, "d"
   * zigzag deltas summed. Values beyond 2^53 lose precision, as every number
   * in JavaScript does. One loop per kind keeps the hot loop branch-free. */
  function decodeDense(bytes, pos, n, kind, out) {
    var b, v, mul, i, acc = 0;
    if (kind === "u") {
      for (i = 0; i < n; i++) {
        b = bytes[pos++];
        if (b < 128) { out[i] = b; continue; }
        v = b & 127; mul = 128;
        do { b = bytes[pos++]; v += (b & 127) * mul; mul *= 128; } while (b >= 128);
        out[i] = v;
      }
      return pos;
    }
    var delta = kind === "d";
    for (i = 0; i < n; i++) {
      b = bytes[pos++];
      if (b < 128) v = b;
      else {
        v = b & 127; mul = 128;
        do { b = bytes[pos++]; v += (b & 127) * mul; mul *= 128; } while (b >= 128);
      }
      v = (v % 2) ? -(v + 1) / 2 : v / 2;
      if (delta) { acc += v; v = acc; }
      out[i] = v;
    }
    return pos;
  }

  /* Sparse: a count, then (gap, value) pairs; the typed array starts zeroed. */
  function decodeSparse(bytes, pos, kind, out) {
    var p = pos;
    var rd = function () {
      var b = bytes[p++];
      if (b < 128) return b;
      var v = b & 127, mul = 128;
      do { b = bytes[p++]; v += (b & 127) * mul; mul *= 128; } while (b >= 128);
      return v;
    };
    var m = rd(), at = 0, zz = kind === "sz";
    for (var j = 0; j < m; j++) {
      at += rd();
      var v = rd();
      out[at++] = zz ? ((v % 2) ? -(v + 1) / 2 : v / 2) : v;
    }
    return p;
  }

  /* Decoding always writes a Float64Array, so the decoder's stores stay
   * monomorphic (fast); narrower columns are converted in one native copy. */
  function decodeColumns(desc, bytes) {
    var cols = {n: desc.n};
    desc.cols.forEach(function (c) {
      var out = new Float64Array(desc.n);
      var kind = c[1] === "g" ? "z" : c[1]; /* gaps become starts in levelColumns */
      var end = kind[0] === "s" ? decodeSparse(bytes, c[3], kind, out) : decodeDense(bytes, c[3], desc.n, kind, out);
      if (end !== c[3] + c[4]) throw new Error("column " + c[0] + " is corrupt");
      cols[c[0]] = c[2] === "f64" ? out : new TYPES[c[2]](out);
    });
    return cols;
  }

  /* Events come grouped by level (thread, row) in start order: the thread
   * and row of each follow from the level table. */
  function levelColumns(tr) {
    var ev = tr.ev, lev = tr.levels, thread = new Uint32Array(ev.n), row = new Uint16Array(ev.n), p = 0;
    var start = ev.start, dur = ev.dur;
    for (var L = 0; L < lev.length; L += 3) {
      var end = p + lev[L + 2], prevEnd = 0;
      thread.fill(lev[L], p, end);
      row.fill(lev[L + 1], p, end);
      for (var k = p; k < end; k++) { start[k] += prevEnd; prevEnd = start[k] + dur[k]; }
      p = end;
    }
    if (p !== ev.n) throw new Error("the level table does not cover the events");
    ev.thread = thread;
    ev.row = row;
  }

  /* Where loading spends its time, for the page's status line and tests. */
  OP.marks = {};
  OP.mark = function (name, since) {
    OP.marks[name] = (OP.marks[name] || 0) + (performance.now() - since);
  };

  /* A binary block's bytes: a Uint8Array, or a promise of one when the block
   * was deflated (data-deflate holds its size before), which the browser's
   * own DecompressionStream inflates. */
  function blockBytes(id) {
    var el = OP.byId(id), bytes = base64Bytes(el.textContent), size = el.getAttribute("data-deflate");
    if (size === null) return bytes;
    if (typeof DecompressionStream !== "function")
      throw new Error("this browser cannot inflate the report's data (no DecompressionStream)");
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return new Response(stream).arrayBuffer().then(function (buf) {
      if (buf.byteLength !== +size) throw new Error(id + " inflated to " + buf.byteLength + " bytes, not " + size);
      return new Uint8Array(buf);
    });
  }

  function decodeTrace(tr, evBytes, memBytes) {
    var t = performance.now();
    tr.ev = decodeColumns(tr.events, evBytes);
    tr.mem = decodeColumns(tr.memory, memBytes);
    /* columns that are zero throughout are not written: the views read
     * these without asking, so they read zeros */
    var zeros = null;
    ["shapes", "types", "args", "merged"].forEach(function (c) {
      if (!tr.ev[c]) tr.ev[c] = zeros || (zeros = new Uint32Array(tr.ev.n));
    });
    OP.mark("columns", t);
    levelColumns(tr);
    tr.nDevice = 0;
    var cat = tr.ev.cat, end = 0, start = Infinity;
    for (var i = 0; i < tr.ev.n; i++) {
      if (cat[i] >= 4 && cat[i] <= 6) tr.nDevice++;
      var e = tr.ev.start[i] + tr.ev.dur[i];
      if (e > end) end = e;
    }
    start = 0;
    for (i = 0; i < tr.ev.n; i++) if (tr.ev.start[i] < start) start = tr.ev.start[i];
    if (tr.mem.n) { start = Math.min(start, tr.mem.ts[0]); end = Math.max(end, tr.mem.ts[tr.mem.n - 1]); }
    tr.t0 = start;
    tr.t1 = Math.max(end, start + (tr.durationNs || 0), start + 1);
    tr.span = tr.durationNs > 0 ? tr.durationNs : tr.t1 - tr.t0;
    OP.mark("decode", t);
  }

  /* The meta object with every trace's columns decoded: at once for a
   * report whose blocks are plain (so it draws before the page's load
   * event), else a promise of it, kept once the browser has inflated them. */
  OP.loadData = function () {
    var t = performance.now();
    var meta = JSON.parse(OP.byId("opprof-meta").textContent);
    var pending = [];
    meta.traces.forEach(function (tr, k) {
      tr.index = k;
      tr.strings = JSON.parse(OP.byId("opprof-strings-" + k).textContent);
      OP.mark("json", t);
      t = performance.now();
      pending.push(blockBytes("opprof-events-" + k), blockBytes("opprof-memory-" + k));
      OP.mark("base64", t);
      t = performance.now();
    });
    var decodeAll = function (bytes) {
      meta.traces.forEach(function (tr, k) { decodeTrace(tr, bytes[2 * k], bytes[2 * k + 1]); });
      return meta;
    };
    var deflated = pending.some(function (b) { return typeof b.then === "function"; });
    if (!deflated) return decodeAll(pending);
    return Promise.all(pending).then(function (bytes) {
      OP.mark("inflate", t);
      return decodeAll(bytes);
    });
  };

  /* What a trace merged down to the page's size merged (the timeline's bar
   * and the overview say the same); "" when nothing was. */
  OP.lodText = function (tr) {
    if (!tr.lod) return "";
    return OP.fmtInt(tr.lod.merged) + " events shorter than " + OP.fmtTime(tr.lod.minNs) + " merged into " +
           OP.fmtInt(tr.lod.blocks) + " blocks";
  };

  /* A thread's name as the trace gave it, else its ids; Kineto's names
   * ("stream 7", "thread 12 (python)") already hold the id, so it is not
   * repeated. */
  OP.threadLabel = function (tr, th) {
    var t = tr.threads[th], name = tr.strings[t[2]] || "", pidName = tr.strings[t[3]] || "";
    var pid = pidName || String(t[0]);
    if (t[4] >= 0) return "GPU " + t[4] + " · " + (name || "stream " + t[1]);
    if (name && name.indexOf(String(t[1])) >= 0) return name + " · pid " + pid;
    return (name ? name + " · " : "") + "thread " + t[1] + " (pid " + pid + ")";
  };

  /* What the trace holds, whatever the options said (a file read back has
   * no options, only its data). */
  OP.contents = function (tr) {
    if (tr.contentsCache) return tr.contentsCache;
    var ev = tr.ev, c = {shapes: !!tr.options.shapes, flops: !!tr.options.flops, memory: !!tr.memProfiled || tr.mem.n > 0,
                         hostThreads: 0, streams: 0};
    for (var i = 0; i < ev.n && !c.shapes; i++) if (ev.shapes[i]) c.shapes = true;
    if (ev.flops) c.flops = true;
    var seen = {};
    for (var L = 0; L < tr.levels.length; L += 3) {
      var th = tr.levels[L];
      if (seen[th] || !tr.levels[L + 2]) continue;
      seen[th] = 1;
      if (tr.threads[th][4] >= 0) c.streams++; else c.hostThreads++;
    }
    tr.contentsCache = c;
    return c;
  };

  /* The events' names for a table of steps: ProfilerStep#N annotations. */
  OP.stepsOf = function (tr) {
    return tr.steps.map(function (i) {
      return {name: tr.strings[tr.ev.name[i]], start: tr.ev.start[i], dur: tr.ev.dur[i], index: i};
    });
  };

  /* The operators rows as objects, for the tables. */
  OP.opRows = function (tr, byShape) {
    var g = byShape ? tr.opsByShape : tr.ops, rows = new Array(g.n);
    for (var i = 0; i < g.n; i++) {
      rows[i] = {name: g.name[i], shapes: g.shapes ? g.shapes[i] : "", count: g.count[i], selfCpu: g.selfCpu[i],
                 cpu: g.cpu[i], selfDev: g.selfDev[i], dev: g.dev[i], mem: g.mem[i], selfMem: g.selfMem[i],
                 flops: g.flops[i]};
    }
    return rows;
  };

  OP.sum = function (rows, key) {
    var s = 0;
    for (var i = 0; i < rows.length; i++) s += rows[i][key];
    return s;
  };

  OP.hasColumn = function (rows, key) {
    for (var i = 0; i < rows.length; i++) if (rows[i][key]) return true;
    return false;
  };
})();
