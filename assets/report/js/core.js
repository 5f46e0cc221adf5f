/* opprof report, core: DOM helpers and number formats shared by the views.
 * Every string from the data goes into the page through textContent or
 * canvas fillText, never as markup. */
"use strict";
var OP = {views: {}};

(function () {
  OP.byId = function (id) { return document.getElementById(id); };

  /* An element with a class and text; never parses markup. */
  OP.el = function (tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  };

  OP.add = function (parent, tag, cls, text) {
    var e = OP.el(tag, cls, text);
    parent.appendChild(e);
    return e;
  };

  OP.clear = function (e) { while (e.firstChild) e.removeChild(e.firstChild); };

  /* Times are nanoseconds in the data; shown as PyTorch's tables show them. */
  OP.fmtTime = function (ns) {
    if (ns === null || ns === undefined || isNaN(ns)) return "";
    var a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(3) + "s";
    if (a >= 1e6) return (ns / 1e6).toFixed(3) + "ms";
    if (a >= 1e3) return (ns / 1e3).toFixed(3) + "us";
    return Math.round(ns) + "ns";
  };

  /* A short form for axis ticks: no trailing zeros. */
  OP.fmtTick = function (ns, step) {
    var units = [[1e9, "s"], [1e6, "ms"], [1e3, "us"], [1, "ns"]];
    for (var i = 0; i < units.length; i++) {
      if (Math.abs(step) >= units[i][0] || i === units.length - 1) {
        var v = ns / units[i][0];
        var digits = Math.max(0, Math.min(6, Math.ceil(-Math.log10(step / units[i][0]) + 0.0001)));
        return v.toFixed(digits) + units[i][1];
      }
    }
    return String(ns);
  };

  OP.fmtBytes = function (b) {
    var a = Math.abs(b);
    if (a >= 1073741824) return (b / 1073741824).toFixed(2) + " Gb";
    if (a >= 1048576) return (b / 1048576).toFixed(2) + " Mb";
    if (a >= 1024) return (b / 1024).toFixed(2) + " Kb";
    return b + " b";
  };

  OP.fmtFlops = function (f) {
    if (!f) return "--";
    var u = [[1e15, "PFLOPs"], [1e12, "TFLOPs"], [1e9, "GFLOPs"], [1e6, "MFLOPs"], [1e3, "KFLOPs"]];
    for (var i = 0; i < u.length; i++) if (f >= u[i][0]) return (f / u[i][0]).toFixed(3) + " " + u[i][1];
    return f + " FLOPs";
  };

  OP.fmtInt = function (n) { return Number(n).toLocaleString("en-US"); };

  OP.fmtPct = function (part, whole) {
    if (!whole) return "0.00%";
    return (100 * part / whole).toFixed(2) + "%";
  };

  OP.fmtSigned = function (v, fmt) {
    if (v > 0) return "+" + fmt(v);
    return fmt(v);
  };

  /* Colours by name: a stable hash, so an operator keeps its colour across
   * views and reports. */
  OP.hash = function (s) {
    var h = 2166136261;
    for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
    return h >>> 0;
  };
  var PALETTE = [];
  for (var i = 0; i < 48; i++) {
    var hue = (i * 137.508) % 360;
    PALETTE.push("hsl(" + hue.toFixed(0) + "," + (50 + (i % 3) * 10) + "%," + (62 + (i % 4) * 4) + "%)");
  }
  OP.PALETTE = PALETTE;
  OP.colorIndex = function (s) { return OP.hash(s) % PALETTE.length; };

  OP.CATS = ["cpu_op", "user_annotation", "cuda_runtime", "cuda_driver", "kernel", "gpu_memcpy", "gpu_memset",
             "memory", "other"];
  OP.isDeviceCat = function (c) { return c >= 4 && c <= 6; };
  OP.isHostCat = function (c) { return c <= 3; };

  /* A labelled figure for the overview cards. */
  OP.card = function (parent, label, value, id) {
    var c = OP.add(parent, "div", "card");
    OP.add(c, "div", "card-label", label);
    var v = OP.add(c, "div", "card-value", value);
    if (id) v.id = id;
    return c;
  };

  /* The controls every view's bar has: a search field and a checkbox. */
  OP.searchField = function (parent, placeholder, id) {
    var f = OP.add(parent, "input");
    f.type = "search";
    f.placeholder = placeholder;
    if (id) f.id = id;
    return f;
  };

  OP.checkbox = function (parent, label, id) {
    var lab = OP.add(parent, "label");
    var box = OP.add(lab, "input");
    box.type = "checkbox";
    box.id = id;
    lab.appendChild(document.createTextNode(" " + label));
    return box;
  };

  OP.section = function (parent, title) {
    var s = OP.add(parent, "section", "panel");
    if (title) OP.add(s, "h2", null, title);
    return s;
  };

  /* The first index in a sorted numeric array with a[i] >= v, within [lo, hi). */
  OP.lowerBound = function (a, v, lo, hi) {
    while (lo < hi) {
      var mid = (lo + hi) >>> 1;
      if (a[mid] < v) lo = mid + 1; else hi = mid;
    }
    return lo;
  };
})();
