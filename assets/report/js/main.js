/* opprof report, start-up: decode the data, build the tabs, show the view
 * the address asks for (#view=timeline&trace=1), and record when the first
 * view was drawn (data-first-draw-ms on <html>, milliseconds since the page
 * started loading). */
"use strict";
(function () {
  var ORDER = ["overview", "operators", "timeline", "memory", "devices", "diff"];

  /* An address typed or pasted by a person may hold a malformed escape
   * (#view=%E0%A4%A): it is taken as written rather than stopping the page. */
  function decode(s) {
    try {
      return decodeURIComponent(s);
    } catch (e) {
      return s;
    }
  }

  function parseHash() {
    var o = {};
    location.hash.slice(1).split("&").forEach(function (p) {
      if (!p) return;
      var i = p.indexOf("=");
      if (i < 0) o[decode(p)] = true;
      else o[decode(p.slice(0, i))] = decode(p.slice(i + 1));
    });
    return o;
  }

  function App(meta) {
    this.meta = meta;
    this.trace = 0;
    this.view = null;
    this.cache = {};
    this.main = OP.byId("main");
    this.tabs = OP.byId("tabs");
    this.buttons = {};
  }

  App.prototype.available = function (v, k) {
    var tr = this.meta.traces[k];
    return OP.views[v].available(tr, this.meta);
  };

  App.prototype.buildTabs = function () {
    var self = this;
    OP.clear(this.tabs);
    ORDER.forEach(function (v) {
      if (!self.available(v, self.trace)) return;
      var b = OP.add(self.tabs, "button", "tab", OP.views[v].title);
      b.setAttribute("data-view", v);
      b.addEventListener("click", function () { self.show(v, self.trace); });
      self.buttons[v] = b;
    });
    var pick = OP.byId("trace-pick");
    OP.clear(pick);
    if (this.meta.traces.length > 1) {
      this.meta.traces.forEach(function (tr, k) {
        var b = OP.add(pick, "button", "pick" + (k === self.trace ? " active" : ""), (k ? "test: " : "base: ") + tr.label);
        b.addEventListener("click", function () {
          self.trace = k;
          self.buildTabs();
          self.show(self.available(self.view, k) ? self.view : "overview", k);
        });
      });
    } else {
      OP.add(pick, "span", "label", this.meta.traces[0].label);
    }
  };

  App.prototype.key = function (v, k) { return v === "diff" ? "diff" : v + ":" + k; };

  App.prototype.container = function (v, k) {
    var c = this.cache[this.key(v, k)];
    return c ? c.root : null;
  };

  App.prototype.instance = function (v, k) {
    var c = this.cache[this.key(v, k)];
    return c ? c.obj : null;
  };

  /* Shows a view, rendering it on first use; views keep their state. */
  App.prototype.show = function (v, k) {
    if (!OP.views[v] || !this.available(v, k)) v = "overview";
    for (var key in this.cache) this.cache[key].root.hidden = true;
    OP.byId("tooltip").hidden = true;
    var c = this.cache[this.key(v, k)];
    if (!c) {
      var root = OP.add(this.main, "div", "view");
      root.setAttribute("data-view", v);
      c = this.cache[this.key(v, k)] = {root: root, obj: null};
      c.obj = OP.views[v].render(root, this.meta.traces[k], this.meta) || null;
    } else {
      c.root.hidden = false;
      if (c.obj && c.obj.resize) { c.obj.resize(); c.obj.draw(); }
    }
    this.view = v;
    this.trace = k;
    for (var b in this.buttons) this.buttons[b].className = "tab" + (b === v ? " active" : "");
    var h = parseHash();
    h.view = v;
    if (this.meta.traces.length > 1) h.trace = String(k);
    var s = Object.keys(h).map(function (x) {
      return h[x] === true ? encodeURIComponent(x) : encodeURIComponent(x) + "=" + encodeURIComponent(h[x]);
    }).join("&");
    if (history.replaceState) { try { history.replaceState(null, "", "#" + s); } catch (e) { /* file:// in some browsers */ } }
  };

  /* Errors anywhere in the page: shown in the bar, kept for the self-test. */
  OP.errors = [];
  window.addEventListener("error", function (e) {
    OP.errors.push(String(e.message));
    var st = OP.byId("status");
    if (st) st.textContent = "error: " + e.message;
  });

  function failed(e) {
    OP.clear(OP.byId("main"));
    OP.add(OP.byId("main"), "p", "error", "This report's data could not be read: " + e.message);
  }

  function start() {
    var loaded, t0 = performance.now();
    OP.marks.beforeScript = t0;
    try {
      loaded = OP.loadData();
    } catch (e) {
      failed(e);
      return;
    }
    if (typeof loaded.then !== "function") show(loaded, t0);
    else loaded.then(function (meta) { show(meta, t0); }, failed);
  }

  function show(meta, t0) {
    var loading = OP.byId("loading");
    if (loading) loading.parentNode.removeChild(loading);
    document.title = meta.title + " · " + meta.traces.map(function (t) { return t.label; }).join(" vs ");
    var app = new App(meta);
    OP.app = app;
    var h = parseHash();
    var k = Math.max(0, Math.min(meta.traces.length - 1, parseInt(h.trace || "0", 10) || 0));
    app.trace = k;
    app.buildTabs();
    try {
      app.show(h.view || "overview", k);
    } catch (e) {
      OP.errors.push((h.view || "overview") + ": " + e.message);
      OP.add(OP.byId("main"), "p", "error", "This view failed: " + e.message);
    }
    if (h.search && app.view === "timeline") {
      var tl = app.instance("timeline", k);
      tl.searchBox.value = h.search;
      tl.setSearch(h.search);
      tl.draw();
    }
    if (h.shape && app.view === "operators") app.instance("operators", k).setByShape(true);
    var ms = performance.now();
    OP.marks.view = ms - t0 - (OP.marks.json + OP.marks.base64 + (OP.marks.inflate || 0) + OP.marks.decode);
    document.documentElement.setAttribute("data-first-draw-ms", ms.toFixed(1));
    document.documentElement.setAttribute("data-marks", Object.keys(OP.marks).map(function (k) {
      return k + ":" + OP.marks[k].toFixed(1);
    }).join(" "));
    OP.byId("status").textContent = "drawn in " + Math.round(ms) + " ms";
    if (h.selftest) OP.selftest(app, ms);
  }

  start();
})();
