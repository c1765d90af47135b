/* gradprobe viewer: the side panel and what drives it: a node's details (forward line,
 * saved tensors and their versions, watched gradients), search, and the findings list,
 * whose click highlights a finding's slice. Loaded after viewer.js; adds to its Viewer.
 */
(function (viewer) {
  "use strict";

  var V = viewer.Viewer.prototype, util = viewer.util;
  var el = util.el, svg = util.svg, fmt = util.fmt, shapeText = util.shapeText;
  var baseName = util.baseName;
  var MAX_RESULTS = 40;

  // -- selection and details ---------------------------------------------------------------

  V.select = function (node) {
    this.selected = node;
    this.applyMarks();
    this.showNode(node);
  };

  V.applyMarks = function () {
    var elements = this.elements, hl = this.highlight, rep = this.rep;
    for (var key in elements) {
      elements[key].classList.remove("gp-selected", "gp-found", "gp-slice", "gp-problem");
    }
    if (this.selected !== null && elements[rep[this.selected]]) {
      elements[rep[this.selected]].classList.add("gp-selected");
    }
    if (this.found !== null && elements[rep[this.found]]) {
      elements[rep[this.found]].classList.add("gp-found");
    }
    this.svg.classList.toggle("gp-focusing", !!hl);
    if (!hl) return;
    for (var i = 0; i < hl.nodes.length; i++) {
      var e = elements[rep[hl.nodes[i]]];
      if (e) e.classList.add("gp-slice");
    }
    for (i = 0; i < hl.problem.length; i++) {
      e = elements[rep[hl.problem[i]]];
      if (e) e.classList.add("gp-problem");
    }
    var edges = this.edgeLayer.childNodes, inSlice = {};
    for (i = 0; i < hl.nodes.length; i++) inSlice[rep[hl.nodes[i]]] = true;
    for (i = 0; i < edges.length; i++) {
      var from = edges[i].getAttribute("data-from"), to = edges[i].getAttribute("data-to");
      edges[i].classList.toggle("gp-slice", !!(inSlice[from] && inSlice[to]));
    }
  };

  V.clearDetails = function (title) {
    this.details.textContent = "";
    el("h3", {text: title}, this.details);
    return this.details;
  };

  V.row = function (table, name, value, cls) {
    var tr = el("tr", null, table);
    el("th", {text: name}, tr);
    var td = el("td", {text: value}, tr);
    if (cls) td.className = cls;
    return td;
  };

  V.showSummary = function () {
    var box = this.clearDetails(this.data.summary);
    el("p", {cls: "gp-hint", text: "Click a box to open a module or see a node: its forward " +
      "line, saved tensors and gradients. Drag to pan, wheel to zoom."}, box);
    for (var i = 0; i < this.data.notes.length; i++) el("p", {cls: "gp-note", text: this.data.notes[i]}, box);
  };

  V.showGroup = function (g) {
    var groups = this.data.groups;
    var box = this.clearDetails(groups.kind[g] === "chunk" ? groups.label[g] : groups.path[g]);
    var table = el("table", null, box);
    this.row(table, "kind", groups.kind[g] === "chunk" ? "part of a long level" : "module");
    if (groups.path[g]) this.row(table, "module", groups.path[g]);
    this.row(table, "nodes", String(groups.size[g]));
    this.row(table, "parameters", String(groups.params[g]));
  };

  V.modulePath = function (node) {
    var g = this.data.nodes.group[node], groups = this.data.groups;
    while (g >= 0 && groups.kind[g] === "chunk") g = groups.parent[g];
    return g >= 0 ? groups.path[g] : "";
  };

  V.showNode = function (node) {
    var data = this.data, self = this;
    var leaf = data.leaves[node];
    var box = this.clearDetails(leaf && leaf.name ? leaf.name : data.nodes.label[node]);
    var table = el("table", {cls: "gp-facts"}, box);
    this.row(table, "node", data.nodes.name[node]);
    this.row(table, "kind", data.kinds[data.nodes.kind[node]]);
    var module = this.modulePath(node);
    if (module) this.row(table, "module", module);
    if (this.roots[node] !== undefined) this.row(table, "output", this.roots[node]);
    var line = data.nodes.line[node];
    if (line >= 0) {
      var where = data.lines[line];
      var td = this.row(table, "forward line", "", "gp-line");
      el("div", {cls: "gp-where", text: baseName(where[0]) + ":" + where[1] +
        (where[2] ? " in " + where[2] : ""), title: where[0]}, td);
      if (where[3]) el("code", {text: where[3]}, td);
    } else if (!leaf) {
      this.row(table, "forward line", "not recorded: trace inside gradprobe.record() and pass " +
        "recording= to save_html to see it", "gp-muted");
    }
    if (leaf) {
      if (leaf.dtype !== "unknown") {
        this.row(table, "tensor", shapeText(leaf.shape) + " " + leaf.dtype + " on " + leaf.device);
      }
      this.row(table, "requires grad", leaf.requires_grad ? "yes" : "no");
      this.row(table, ".grad", leaf.has_grad ? "set when traced" : "not set when traced");
    }
    var meta = data.meta[node];
    if (meta) for (var k in meta) this.row(table, k, meta[k]);
    if (data.nodes.freed.indexOf(node) >= 0) this.row(table, "saved tensors", "freed by backward");
    var saved = data.saved[node];
    if (saved) {
      el("h4", {text: "saved for backward"}, box);
      var st = el("table", {cls: "gp-saved"}, box);
      var head = el("tr", null, st);
      ["slot", "tensor", "saved at", "now"].forEach(function (h) { el("th", {text: h}, head); });
      for (var i = 0; i < saved.length; i++) {
        var s = saved[i];
        var tr = el("tr", {cls: s[4] ? "gp-stale-row" : ""}, st);
        el("td", {text: s[0] + (s[5] ? " (" + s[5] + ")" : "")}, tr);
        el("td", {text: s[1] || (s[6] ? "packed: " + s[6] : "")}, tr);
        el("td", {text: s[3] === null ? "?" : "v" + s[3]}, tr);
        el("td", {text: (s[2] === null ? "?" : "v" + s[2]) + (s[4] ? "  modified in place" : "")}, tr);
      }
    }
    var stats = data.watch[node];
    if (stats) this.showStats(box, stats);
    var findings = this.findingsOf[node];
    if (findings) {
      el("h4", {text: "findings"}, box);
      var ul = el("ul", {cls: "gp-links"}, box);
      findings.forEach(function (f) {
        var li = el("li", {text: data.findings[f].code + " " + data.findings[f].title}, ul);
        li.addEventListener("click", function () { self.showFinding(f); });
      });
    }
    var inputs = [], consumers = [], edges = data.edges;
    for (var e = 0; e < edges.length; e += 2) {
      if (edges[e + 1] === node) inputs.push(edges[e]);
      else if (edges[e] === node) consumers.push(edges[e + 1]);
    }
    this.neighbours(box, "inputs", inputs);
    this.neighbours(box, "used by", consumers);
  };

  V.neighbours = function (box, title, ids) {
    if (!ids.length) return;
    var self = this, data = this.data;
    el("h4", {text: title}, box);
    var ul = el("ul", {cls: "gp-links"}, box);
    ids.slice(0, 20).forEach(function (id) {
      var leaf = data.leaves[id];
      var li = el("li", {text: leaf && leaf.name ? leaf.name : data.nodes.label[id]}, ul);
      li.addEventListener("click", function () { self.goTo(id); });
    });
  };

  V.showStats = function (box, stats) {
    el("h4", {text: "gradient (watch)"}, box);
    var values = stats.norm.filter(function (v) { return typeof v === "number"; });
    if (values.length > 1) {
      var w = 220, h = 40, lo = Math.min.apply(null, values), hi = Math.max.apply(null, values);
      var spark = svg("svg", {width: w, height: h, "class": "gp-spark"}, box);
      var d = "";
      for (var i = 0; i < stats.norm.length; i++) {
        var v = stats.norm[i];
        if (typeof v !== "number") continue;
        var px = 2 + (w - 4) * i / Math.max(stats.norm.length - 1, 1);
        var py = h - 2 - (h - 4) * (hi > lo ? (v - lo) / (hi - lo) : 0.5);
        d += (d ? " L" : "M") + px.toFixed(1) + "," + py.toFixed(1);
      }
      svg("path", {d: d}, spark);
    }
    var table = el("table", {cls: "gp-stats"}, box);
    var head = el("tr", null, table);
    ["step", "norm", "mean |g|", "max |g|"].forEach(function (t) { el("th", {text: t}, head); });
    var start = Math.max(0, stats.step.length - 8);
    for (i = start; i < stats.step.length; i++) {
      var tr = el("tr", null, table);
      el("td", {text: String(stats.step[i])}, tr);
      el("td", {text: fmt(stats.norm[i])}, tr);
      el("td", {text: fmt(stats.mean_abs[i])}, tr);
      el("td", {text: fmt(stats.max_abs[i])}, tr);
    }
  };

  V.goTo = function (node) {
    this.reveal(node);
    this.found = node;
    this.select(node);
    this.centreOn([this.rep[node]]);
  };

  // -- search ------------------------------------------------------------------------------

  V.matches = function (query) {
    var q = query.trim().toLowerCase(), out = [];
    if (!q) return out;
    var data = this.data, labels = data.nodes.label, names = data.nodes.name;
    var exact = [], prefix = [], rest = [];
    for (var n = 0; n < this.N && exact.length + prefix.length + rest.length < 5000; n++) {
      var leaf = data.leaves[n];
      var text = (leaf && leaf.name ? leaf.name : labels[n]).toLowerCase();
      var name = names[n].toLowerCase();
      var hit = {node: n, text: leaf && leaf.name ? leaf.name : labels[n], detail: leaf ? "parameter" : names[n]};
      if (leaf) hit.detail = leaf.kind + " " + shapeText(leaf.shape);
      if (text === q || name === q) exact.push(hit);
      else if (text.indexOf(q) === 0) prefix.push(hit);
      else if (text.indexOf(q) >= 0 || name.indexOf(q) >= 0) rest.push(hit);
    }
    var groups = data.groups;
    for (var g = 0; g < this.G; g++) {
      if (groups.kind[g] !== "module") continue;
      var path = groups.path[g].toLowerCase();
      if (path === q) exact.unshift({group: g, text: groups.path[g], detail: "module"});
      else if (path.indexOf(q) >= 0) rest.push({group: g, text: groups.path[g], detail: "module"});
    }
    return exact.concat(prefix, rest).slice(0, MAX_RESULTS);
  };

  V.showResults = function (query) {
    var self = this, list = this.results;
    list.textContent = "";
    var hits = this.matches(query);
    list.hidden = !query.trim();
    if (!hits.length && query.trim()) {
      el("li", {cls: "gp-none", text: "nothing named like " + JSON.stringify(query.trim())}, list);
      return;
    }
    hits.forEach(function (hit) {
      var li = el("li", {cls: "gp-result"}, list);
      el("span", {cls: "gp-result-name", text: hit.text}, li);
      el("span", {cls: "gp-result-detail", text: hit.detail}, li);
      li.addEventListener("click", function () {
        list.hidden = true;
        if (hit.group !== undefined) self.goToGroup(hit.group);
        else self.goTo(hit.node);
      });
    });
  };

  V.goToGroup = function (g) {
    var parent = this.data.groups.parent[g];
    var changed = false;
    while (parent >= 0) {
      if (!this.open[parent]) { this.open[parent] = 1; changed = true; }
      parent = this.data.groups.parent[parent];
    }
    if (changed) this.relayout();
    var items = [];
    for (var i = 0; i < this.layout.items.length; i++) {
      var item = this.layout.items[i];
      if (item === this.N + g || this.contains(g, item)) items.push(item);
    }
    this.centreOn(items);
    this.showGroup(g);
  };

  // -- findings ----------------------------------------------------------------------------

  V.renderFindings = function (section) {
    var self = this, findings = this.data.findings;
    this.findingItems = [];
    if (!findings.length) return;
    el("h3", {text: findings.length + (findings.length === 1 ? " finding" : " findings")}, section);
    var ul = el("ul", {cls: "gp-finding-list"}, section);
    findings.forEach(function (f, index) {
      var li = el("li", {cls: "gp-finding", "data-finding": index}, ul);
      el("span", {cls: "gp-code", text: f.code}, li);
      el("span", {cls: "gp-finding-title", text: " " + f.title}, li);
      var cause = null;
      for (var i = 0; i < f.locations.length; i++) if (f.locations[i].role === "cause") cause = f.locations[i];
      if (cause) el("div", {cls: "gp-where", text: cause.name + ":" + cause.line + (cause.text ? "  " + cause.text : "")}, li);
      el("div", {cls: "gp-muted", text: f.nodes.length ? f.nodes.length + " nodes in this graph" :
        "not in this graph"}, li);
      li.addEventListener("click", function () { self.showFinding(index); });
      self.findingItems.push(li);
    });
  };

  V.showFinding = function (index) {
    var f = this.data.findings[index], self = this;
    for (var i = 0; i < this.findingItems.length; i++) {
      this.findingItems[i].classList.toggle("gp-active", i === index);
    }
    this.highlight = {nodes: f.nodes, problem: f.problem};
    var changed = false;
    for (i = 0; i < f.nodes.length; i++) {
      var g = this.data.nodes.group[f.nodes[i]];
      while (g >= 0) {
        if (!this.open[g]) { this.open[g] = 1; changed = true; }
        g = this.data.groups.parent[g];
      }
    }
    if (changed) this.relayout();
    else this.applyMarks();
    var shown = [];
    for (i = 0; i < f.nodes.length; i++) shown.push(this.rep[f.nodes[i]]);
    if (shown.length) this.fitTo(this.bounds(shown), 1.2);
    var box = this.clearDetails(f.code + " " + f.kind);
    el("p", {cls: "gp-finding-title", text: f.title}, box);
    el("p", {text: f.message}, box);
    if (f.hint) el("p", {cls: "gp-fix", text: "Fix: " + f.hint}, box);
    f.locations.forEach(function (loc) {
      var div = el("div", {cls: "gp-loc gp-role-" + loc.role}, box);
      el("span", {cls: "gp-role", text: loc.role + " "}, div);
      el("span", {cls: "gp-where", text: loc.name + ":" + loc.line, title: loc.file}, div);
      if (loc.text) el("code", {text: loc.text}, div);
    });
    if (f.marks.length) {
      var ul = el("ul", {cls: "gp-links"}, box);
      f.marks.forEach(function (mark) {
        var li = el("li", {cls: "gp-mark-" + mark[1], text: mark[2]}, ul);
        if (mark[0] !== null) li.addEventListener("click", function () { self.goTo(mark[0]); });
      });
    }
    f.cuts.forEach(function (cut) {
      el("p", {cls: "gp-cut", text: cut.op + "() cut the graph at " + cut.where}, box);
    });
    f.missing.forEach(function (leaf) {
      el("p", {cls: "gp-missing", text: leaf.name + ": no gradient (" + leaf.reason + ")"}, box);
    });
    if (!f.nodes.length) {
      el("p", {cls: "gp-muted", text: f.slice ? "Its slice of the graph (" + f.slice +
        " nodes) is not part of this graph." : "No graph slice was recorded for it."}, box);
    }
    el("p", {cls: "gp-muted", text: "Documented in " + f.doc}, box);
  };

  V.clearHighlight = function () {
    this.highlight = null;
    this.found = null;
    this.selected = null;
    for (var i = 0; i < this.findingItems.length; i++) this.findingItems[i].classList.remove("gp-active");
    this.applyMarks();
    this.showSummary();
  };
})(gradprobeViewer);
