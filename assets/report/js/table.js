/* opprof report, table: a sortable, filterable table of row objects. Cells
 * are text nodes; a long table shows its first rows and a button for all. */
"use strict";
(function () {
  /* columns: [{key, label, fmt(row), value(row) (sort value; default row[key]), num, title}] */
  function Table(parent, opts) {
    this.wrap = OP.add(parent, "div", "table-wrap");
    this.columns = opts.columns;
    this.rows = opts.rows || [];
    this.sortKey = opts.sortKey || null;
    this.sortDesc = opts.sortDesc !== false;
    this.filter = "";
    this.filterKeys = opts.filterKeys || ["name"];
    this.limit = opts.limit || 500;
    this.id = opts.id || null;
    this.pinned = opts.pinned || null; /* a row always shown first (totals) */
    this.onRow = opts.onRow || null;
    this.render();
  }

  Table.prototype.setRows = function (rows) { this.rows = rows; this.render(); };
  Table.prototype.setColumns = function (cols) { this.columns = cols; this.render(); };
  Table.prototype.setFilter = function (text) { this.filter = text.toLowerCase(); this.render(); };

  Table.prototype.column = function (key) {
    for (var i = 0; i < this.columns.length; i++) if (this.columns[i].key === key) return this.columns[i];
    return null;
  };

  Table.prototype.visibleRows = function () {
    var rows = this.rows, f = this.filter, keys = this.filterKeys;
    if (f) {
      rows = rows.filter(function (r) {
        for (var k = 0; k < keys.length; k++) if (String(r[keys[k]] || "").toLowerCase().indexOf(f) >= 0) return true;
        return false;
      });
    } else {
      rows = rows.slice();
    }
    var col = this.sortKey ? this.column(this.sortKey) : null;
    if (col) {
      var get = col.value || function (r) { return r[col.key]; };
      var sign = this.sortDesc ? -1 : 1;
      /* Array.prototype.sort is stable: equal rows keep their first-occurrence order */
      rows.sort(function (a, b) {
        var x = get(a), y = get(b);
        if (typeof x === "string" || typeof y === "string") return sign * String(x).localeCompare(String(y));
        return sign * ((x > y) - (x < y));
      });
    }
    return rows;
  };

  Table.prototype.render = function () {
    var self = this;
    OP.clear(this.wrap);
    var table = OP.add(this.wrap, "table", "grid");
    if (this.id) table.id = this.id;
    var head = OP.add(OP.add(table, "thead"), "tr");
    this.columns.forEach(function (c) {
      var th = OP.add(head, "th", c.num ? "num" : null, c.label);
      if (c.title) th.title = c.title;
      th.setAttribute("data-key", c.key);
      if (self.sortKey === c.key) th.className += self.sortDesc ? " sorted-desc" : " sorted-asc";
      th.addEventListener("click", function () {
        if (self.sortKey === c.key) self.sortDesc = !self.sortDesc;
        else { self.sortKey = c.key; self.sortDesc = !!c.num; }
        self.render();
      });
    });
    var body = OP.add(table, "tbody");
    var rows = this.visibleRows();
    var shown = Math.min(rows.length, this.limit);
    var addRow = function (r, cls) {
      var tr = OP.add(body, "tr", cls);
      self.columns.forEach(function (c) {
        var v = c.fmt ? c.fmt(r) : r[c.key];
        var td = OP.add(tr, "td", c.num ? "num" : null, v);
        if (!c.num && typeof v === "string" && v.length > 60) td.title = v;
      });
      if (self.onRow) tr.addEventListener("click", function () { self.onRow(r); });
    };
    if (this.pinned) addRow(this.pinned, "pinned");
    for (var i = 0; i < shown; i++) addRow(rows[i], null);
    var foot = OP.add(this.wrap, "div", "table-foot");
    foot.textContent = rows.length === this.rows.length ? rows.length + " rows"
                                                        : rows.length + " of " + this.rows.length + " rows";
    if (shown < rows.length) {
      foot.textContent += " (first " + shown + " shown) ";
      var more = OP.add(foot, "button", null, "show all");
      more.addEventListener("click", function () { self.limit = Infinity; self.render(); });
    }
  };

  OP.Table = Table;
})();
