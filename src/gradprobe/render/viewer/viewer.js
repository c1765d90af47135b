/* gradprobe's interactive graph viewer. Plain JavaScript, no library, no network.
 *
 * mount(host, data) draws the data gradprobe/render/_viewer_data.py builds. Only what is
 * open is laid out (by layout.js, loaded first): a collapsed module (or chunk of a long
 * level) is one box, so a 100,000-node graph starts as a few dozen boxes and each click
 * lays out a few dozen more. Box widths come from the browser's own text metrics, so
 * every label fits the font the page really uses. panels.js adds the side panel (a
 * node's details, search, findings) to Viewer's prototype.
 */
var gradprobeViewer = (function (layout) {
  "use strict";

  var SVGNS = "http:" + "//www.w3.org/2000/svg"; // a namespace name, never fetched
  var FAMILY = '"DejaVu Sans", Helvetica, Arial, sans-serif';
  var FONT = "12px " + FAMILY;
  var BOLD = "bold 12px " + FAMILY;
  var SMALL = "10px " + FAMILY;
  var CLUSTER_FONT = "bold 11px " + FAMILY;
  var PAD_X = 10, LINE = 15, SMALL_LINE = 13, PAD_Y = 7;

  var measureContext = null;
  var widthCache = {};

  function textWidth(text, font) {
    var key = font + "\u0000" + text;
    var found = widthCache[key];
    if (found !== undefined) return found;
    if (!measureContext) measureContext = document.createElement("canvas").getContext("2d");
    measureContext.font = font;
    found = measureContext.measureText(text).width;
    widthCache[key] = found;
    return found;
  }

  // ``text`` cut to ``width`` pixels in ``font``, ending in an ellipsis when cut.
  function shorten(text, font, width) {
    if (textWidth(text, font) <= width) return text;
    var lo = 0, hi = text.length;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (textWidth(text.slice(0, mid) + "\u2026", font) <= width) lo = mid; else hi = mid - 1;
    }
    return text.slice(0, Math.max(lo, 1)) + "\u2026";
  }

  function el(tag, attrs, parent) {
    var node = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (k === "text") node.textContent = attrs[k];
      else if (k === "cls") node.className = attrs[k];
      else node.setAttribute(k, attrs[k]);
    }
    if (parent) parent.appendChild(node);
    return node;
  }

  function svg(tag, attrs, parent) {
    var node = document.createElementNS(SVGNS, tag);
    if (attrs) for (var k in attrs) {
      if (k === "text") node.textContent = attrs[k];
      else node.setAttribute(k, attrs[k]);
    }
    if (parent) parent.appendChild(node);
    return node;
  }

  function baseName(path) {
    var parts = String(path).split(/[\\/]/);
    return parts[parts.length - 1];
  }

  function shapeText(shape) {
    return shape.length ? shape.join("\u00d7") : "scalar";
  }

  function fmt(value) {
    if (value === null || value === undefined) return "\u2013";
    if (typeof value === "string") return value;
    if (value === 0) return "0";
    var a = Math.abs(value);
    return a >= 1e4 || a < 1e-3 ? value.toExponential(2) : String(+value.toPrecision(4));
  }

  // -- the viewer ------------------------------------------------------------------------

  function Viewer(host, data) {
    this.host = host;
    this.data = data;
    var nodes = data.nodes, groups = data.groups;
    this.N = nodes.label.length;
    this.G = groups.label.length;
    this.open = new Uint8Array(this.G);
    this.groupNodes = [];
    this.groupGroups = [];
    this.topNodes = [];
    this.topGroups = [];
    var g, n;
    for (g = 0; g < this.G; g++) { this.groupNodes.push([]); this.groupGroups.push([]); }
    for (g = 0; g < this.G; g++) {
      var parent = groups.parent[g];
      (parent < 0 ? this.topGroups : this.groupGroups[parent]).push(g);
    }
    for (n = 0; n < this.N; n++) {
      g = nodes.group[n];
      (g < 0 ? this.topNodes : this.groupNodes[g]).push(n);
    }
    this.depth = new Int32Array(this.G);
    for (g = 0; g < this.G; g++) {
      this.depth[g] = groups.parent[g] < 0 ? 0 : this.depth[groups.parent[g]] + 1;
    }
    // where a group starts in forward order: its first node's position
    this.first = new Float64Array(this.G).fill(Infinity);
    for (n = 0; n < this.N; n++) {
      g = nodes.group[n];
      var pos = nodes.pos[n];
      while (g >= 0 && pos < this.first[g]) { this.first[g] = pos; g = groups.parent[g]; }
    }
    this.roots = {};
    for (var r = 0; r < data.roots.length; r++) {
      if (data.roots[r].node !== null) this.roots[data.roots[r].node] = data.roots[r].name;
    }
    this.stale = {};
    for (var id in data.saved) {
      var rows = data.saved[id];
      for (var i = 0; i < rows.length; i++) if (rows[i][4]) this.stale[id] = true;
    }
    this.findingsOf = {};
    for (var f = 0; f < data.findings.length; f++) {
      var ids = data.findings[f].nodes;
      for (var j = 0; j < ids.length; j++) {
        (this.findingsOf[ids[j]] = this.findingsOf[ids[j]] || []).push(f);
      }
    }
    this.view = {x: 0, y: 0, k: 1};
    this.selected = null;
    this.found = null;
    this.highlight = null;
    this.build();
    this.openInitial();
    this.relayout();
    this.firstView();
    this.showSummary();
  }

  var V = Viewer.prototype;

  // -- DOM -------------------------------------------------------------------------------

  V.build = function () {
    var self = this;
    var host = this.host;
    var old = host.querySelector(".gp-fallback");
    if (old) old.parentNode.removeChild(old);
    var root = this.root = el("div", {cls: "gp-viewer"}, host);
    var bar = el("div", {cls: "gp-toolbar"}, root);
    el("span", {cls: "gp-title", text: this.data.title}, bar);
    var searchBox = el("div", {cls: "gp-search"}, bar);
    var input = this.search = el("input", {
      type: "search", placeholder: "search a parameter, op or module", "aria-label": "search",
      cls: "gp-search-input"}, searchBox);
    this.results = el("ul", {cls: "gp-results", hidden: ""}, searchBox);
    input.addEventListener("input", function () { self.showResults(input.value); });
    input.addEventListener("keydown", function (event) {
      if (event.key === "Enter") {
        var first = self.results.querySelector("li");
        self.showResults(input.value);
        first = self.results.querySelector("li");
        if (first) first.click();
      } else if (event.key === "Escape") {
        self.results.hidden = true;
      }
    });
    this.button(bar, "fit", "Fit", function () { self.fit(); });
    this.button(bar, "collapse", "Collapse all", function () { self.collapseAll(); });
    this.button(bar, "clear", "Clear", function () { self.clearHighlight(); });
    this.status = el("span", {cls: "gp-status"}, bar);
    var main = el("div", {cls: "gp-main"}, root);
    var canvas = this.canvas = el("div", {cls: "gp-canvas"}, main);
    var picture = this.svg = svg("svg", {"class": "gp-svg"}, canvas);
    var defs = svg("defs", null, picture);
    var marker = svg("marker", {id: this.markerId("arrow"), viewBox: "0 0 10 10", refX: "9",
      refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse"}, defs);
    svg("path", {d: "M0,0 L10,5 L0,10 z", "class": "gp-arrow"}, marker);
    this.scene = svg("g", {"class": "gp-scene"}, picture);
    this.clusterLayer = svg("g", {"class": "gp-clusters"}, this.scene);
    this.edgeLayer = svg("g", {"class": "gp-edges"}, this.scene);
    this.itemLayer = svg("g", {"class": "gp-items"}, this.scene);
    var side = el("div", {cls: "gp-side"}, main);
    this.details = el("section", {cls: "gp-details"}, side);
    var list = el("section", {cls: "gp-findings"}, side);
    this.renderFindings(list);
    this.bindPointer();
  };

  V.markerId = function (name) {
    return "gp-" + name + "-" + (this.host.id || "viewer");
  };

  V.button = function (bar, name, text, action) {
    var b = el("button", {type: "button", cls: "gp-button gp-button-" + name, text: text}, bar);
    b.addEventListener("click", action);
    return b;
  };

  // -- what is visible -------------------------------------------------------------------

  V.openInitial = function () {
    var budget = this.data.budget;
    var count = this.topNodes.length + this.topGroups.length;
    var queue = this.topGroups.slice();
    var self = this;
    queue.sort(function (a, b) { return self.first[a] - self.first[b]; });
    for (var i = 0; i < queue.length; i++) {
      var g = queue[i];
      var inside = this.groupNodes[g].length + this.groupGroups[g].length;
      if (count - 1 + inside > budget) continue;
      this.open[g] = 1;
      count += inside - 1;
      var more = this.groupGroups[g].slice();
      more.sort(function (a, b) { return self.first[a] - self.first[b]; });
      for (var j = 0; j < more.length; j++) queue.push(more[j]);
    }
  };

  // The box each node is drawn in: itself, or the outermost collapsed group holding it.
  V.representatives = function () {
    var groups = this.data.groups, G = this.G, N = this.N;
    var repGroup = new Int32Array(G);
    for (var g = 0; g < G; g++) {
      var parent = groups.parent[g];
      var above = parent < 0 ? -1 : repGroup[parent];
      repGroup[g] = above >= 0 ? above : (this.open[g] ? -1 : g);
    }
    var rep = new Int32Array(N);
    var group = this.data.nodes.group;
    for (var n = 0; n < N; n++) {
      var owner = group[n];
      rep[n] = owner < 0 || repGroup[owner] < 0 ? n : N + repGroup[owner];
    }
    return rep;
  };

  V.itemFirst = function (item) {
    return item < this.N ? this.data.nodes.pos[item] : this.first[item - this.N];
  };

  // -- layout ----------------------------------------------------------------------------

  V.boxOf = function (item) {
    var N = this.N, data = this.data, lines = [];
    var cls = "gp-item";
    if (item < N) {
      var kind = data.kinds[data.nodes.kind[item]];
      var leaf = data.leaves[item];
      cls += " gp-node gp-kind-" + kind;
      if (leaf) {
        lines.push([leaf.name || data.nodes.label[item], BOLD]);
        // a parameter a finding names but no graph holds: nothing known but its name
        lines.push([leaf.dtype === "unknown" ? (leaf.has_grad ? "parameter" : "got no gradient")
          : shapeText(leaf.shape) + " " + leaf.dtype, SMALL]);
      } else {
        lines.push([data.nodes.label[item], FONT]);
        if (this.stale[item]) lines.push(["stale saved tensor", SMALL]);
      }
      if (this.roots[item] !== undefined) {
        cls += " gp-root";
        lines.push(["\u2192 " + this.roots[item], SMALL]);
      }
      if (this.stale[item]) cls += " gp-stale";
    } else {
      var g = item - N, groups = data.groups;
      var isChunk = groups.kind[g] === "chunk";
      cls += " gp-group gp-" + (isChunk ? "chunk" : "module");
      lines.push([isChunk ? groups.label[g] : groups.path[g], BOLD]);
      var params = groups.params[g];
      lines.push(["\u25b8 " + groups.size[g] + (groups.size[g] === 1 ? " node" : " nodes") +
        (params ? ", " + params + (params === 1 ? " parameter" : " parameters") : "") +
        (isChunk && groups.path[g] ? " in " + groups.path[g] : ""), SMALL]);
    }
    var width = 0, height = 2 * PAD_Y;
    for (var i = 0; i < lines.length; i++) {
      width = Math.max(width, textWidth(lines[i][0], lines[i][1]));
      height += lines[i][1] === SMALL ? SMALL_LINE : LINE;
    }
    return {item: item, lines: lines, cls: cls, w: Math.ceil(width) + 2 * PAD_X, h: height};
  };

  V.relayout = function () {
    var N = this.N, data = this.data, self = this;
    var rep = this.rep = this.representatives();
    var seen = {}, items = [];
    for (var n = 0; n < N; n++) {
      if (!seen[rep[n]]) { seen[rep[n]] = true; items.push(rep[n]); }
    }
    items.sort(function (a, b) { return self.itemFirst(a) - self.itemFirst(b) || a - b; });
    var rank = {};
    for (var i = 0; i < items.length; i++) rank[items[i]] = i;
    // edges between boxes, once each
    var edges = data.edges, pairs = {}, links = [];
    for (var e = 0; e < edges.length; e += 2) {
      var a = rep[edges[e]], b = rep[edges[e + 1]];
      if (a === b) continue;
      var key = a + ">" + b;
      if (pairs[key]) continue;
      pairs[key] = true;
      links.push({from: a, to: b, back: rank[a] > rank[b]});
    }
    var boxes = {};
    for (i = 0; i < items.length; i++) boxes[items[i]] = this.boxOf(items[i]);
    var placed = layout.layered(items, links, boxes, this.chainsOf(items));
    this.layout = {items: items, boxes: boxes, links: placed.routes, layers: placed.layers};
    this.render();
  };

  // The open groups around each box, outermost first.
  V.chainsOf = function (items) {
    var chains = {}, parents = this.data.groups.parent, group = this.data.nodes.group;
    for (var i = 0; i < items.length; i++) {
      var item = items[i], chain = [];
      var g = item < this.N ? group[item] : parents[item - this.N];
      while (g >= 0) { chain.push(g); g = parents[g]; }
      chains[item] = chain.reverse();
    }
    return chains;
  };

  // -- drawing ---------------------------------------------------------------------------

  V.render = function () {
    var layout = this.layout, boxes = layout.boxes, self = this;
    this.itemLayer.textContent = "";
    this.edgeLayer.textContent = "";
    this.clusterLayer.textContent = "";
    this.elements = {};
    var arrow = "url(#" + this.markerId("arrow") + ")";
    for (var i = 0; i < layout.links.length; i++) {
      var chain = layout.links[i].chain, link = layout.links[i].link;
      var points = [];
      for (var c = 0; c < chain.length; c++) points.push(boxes[chain[c]]);
      var d = this.edgePath(points);
      var path = svg("path", {d: d, "class": "gp-edge" + (link.back ? " gp-back" : ""),
        "marker-end": link.back ? "" : arrow, "marker-start": link.back ? arrow : ""},
        this.edgeLayer);
      path.setAttribute("data-from", link.from);
      path.setAttribute("data-to", link.to);
    }
    for (i = 0; i < layout.items.length; i++) this.drawItem(boxes[layout.items[i]]);
    this.drawClusters();
    this.applyMarks();
    this.status.textContent = layout.items.length + " boxes shown of " + this.N + " nodes";
  };

  V.edgePath = function (points) {
    var first = points[0], last = points[points.length - 1];
    var d = "M" + first.x + "," + (first.y + first.h / 2);
    var prevX = first.x, prevY = first.y + first.h / 2;
    for (var i = 1; i < points.length; i++) {
      var p = points[i];
      var yIn = i === points.length - 1 ? p.y - p.h / 2 - 2 : p.y;
      var mid = (prevY + yIn) / 2;
      d += " C" + prevX + "," + mid + " " + p.x + "," + mid + " " + p.x + "," + yIn;
      prevX = p.x;
      prevY = yIn;
    }
    void last;
    return d;
  };

  V.drawItem = function (box) {
    var self = this;
    var g = svg("g", {"class": box.cls, transform: "translate(" + box.x + "," + box.y + ")",
      "data-item": box.item}, this.itemLayer);
    if (box.item < this.N) g.setAttribute("data-node", box.item);
    else g.setAttribute("data-group", box.item - this.N);
    svg("rect", {x: -box.w / 2, y: -box.h / 2, width: box.w, height: box.h, rx: 5, ry: 5}, g);
    var y = -box.h / 2 + PAD_Y;
    for (var i = 0; i < box.lines.length; i++) {
      var small = box.lines[i][1] === SMALL;
      var size = small ? SMALL_LINE : LINE;
      svg("text", {x: 0, y: y + size * 0.75, "text-anchor": "middle",
        "class": small ? "gp-sub" : (box.lines[i][1] === BOLD ? "gp-label gp-bold" : "gp-label"),
        text: box.lines[i][0]}, g);
      y += size;
    }
    svg("title", {text: this.tooltip(box.item)}, g);
    g.addEventListener("click", function (event) {
      event.stopPropagation();
      if (self.dragged) return;
      self.clickItem(box.item);
    });
    this.elements[box.item] = g;
  };

  V.tooltip = function (item) {
    if (item >= this.N) {
      var g = item - this.N;
      return this.data.groups.path[g] + ": " + this.data.groups.size[g] + " nodes (click to open)";
    }
    return this.data.nodes.name[item];
  };

  V.drawClusters = function () {
    var groups = this.data.groups, boxes = this.layout.boxes, N = this.N, self = this;
    var bounds = {};
    function grow(g, x0, y0, x1, y1) {
      var b = bounds[g];
      if (!b) bounds[g] = [x0, y0, x1, y1];
      else { b[0] = Math.min(b[0], x0); b[1] = Math.min(b[1], y0); b[2] = Math.max(b[2], x1); b[3] = Math.max(b[3], y1); }
    }
    var items = this.layout.items, group = this.data.nodes.group;
    for (var i = 0; i < items.length; i++) {
      var item = items[i], box = boxes[item];
      var owner = item < N ? group[item] : groups.parent[item - N];
      if (owner >= 0) grow(owner, box.x - box.w / 2, box.y - box.h / 2, box.x + box.w / 2, box.y + box.h / 2);
    }
    var open = [], listed = {};
    for (var g in bounds) {  // every open group around a box, holding one directly or not
      for (var h = +g; h >= 0 && !listed[h]; h = groups.parent[h]) { listed[h] = true; open.push(h); }
    }
    open.sort(function (a, b) { return self.depth[b] - self.depth[a]; });
    for (i = 0; i < open.length; i++) {  // deepest first: a cluster grows its parent
      g = open[i];
      var b = bounds[g], pad = 8;
      b[0] -= pad; b[2] += pad; b[1] -= pad + 14; b[3] += pad;
      var parent = groups.parent[g];
      if (parent >= 0) grow(parent, b[0], b[1], b[2], b[3]);
    }
    open.sort(function (a, b) { return self.depth[a] - self.depth[b]; });
    this.clusterBounds = open.map(function (g) { return bounds[g]; });
    for (i = 0; i < open.length; i++) {
      g = open[i];
      b = bounds[g];
      var isChunk = groups.kind[g] === "chunk";
      var frame = svg("g", {"class": "gp-cluster" + (isChunk ? " gp-cluster-chunk" : ""),
        "data-group": g}, this.clusterLayer);
      svg("rect", {x: b[0], y: b[1], width: b[2] - b[0], height: b[3] - b[1], rx: 8, ry: 8}, frame);
      var name = isChunk ? groups.label[g] : groups.path[g];
      var label = svg("text", {x: b[0] + 8, y: b[1] + 13, "class": "gp-cluster-label",
        text: shorten("\u25be " + name, CLUSTER_FONT, b[2] - b[0] - 16)}, frame);
      svg("title", {text: name + " (click to collapse)"}, label);
      label.addEventListener("click", (function (group) {
        return function (event) { event.stopPropagation(); self.collapse(group); };
      })(g));
    }
  };

  // -- pan and zoom ----------------------------------------------------------------------

  V.applyView = function () {
    var v = this.view;
    this.scene.setAttribute("transform", "translate(" + v.x + "," + v.y + ") scale(" + v.k + ")");
  };

  V.bounds = function (items) {
    var boxes = this.layout.boxes, b = [Infinity, Infinity, -Infinity, -Infinity];
    for (var i = 0; i < items.length; i++) {
      var box = boxes[items[i]];
      if (!box) continue;
      b[0] = Math.min(b[0], box.x - box.w / 2); b[1] = Math.min(b[1], box.y - box.h / 2);
      b[2] = Math.max(b[2], box.x + box.w / 2); b[3] = Math.max(b[3], box.y + box.h / 2);
    }
    return b;
  };

  V.fitTo = function (b, maxZoom) {
    if (!isFinite(b[0])) return;
    var width = this.canvas.clientWidth || 800, height = this.canvas.clientHeight || 600;
    var margin = 30;
    var k = Math.min((width - 2 * margin) / Math.max(b[2] - b[0], 1),
                     (height - 2 * margin) / Math.max(b[3] - b[1], 1), maxZoom || 1.5);
    k = Math.max(k, 0.02);
    this.view = {k: k, x: width / 2 - k * (b[0] + b[2]) / 2, y: height / 2 - k * (b[1] + b[3]) / 2};
    this.applyView();
  };

  // Every box and every open module's frame.
  V.allBounds = function () {
    var b = this.bounds(this.layout.items), frames = this.clusterBounds || [];
    for (var i = 0; i < frames.length; i++) {
      b[0] = Math.min(b[0], frames[i][0]); b[1] = Math.min(b[1], frames[i][1]);
      b[2] = Math.max(b[2], frames[i][2]); b[3] = Math.max(b[3], frames[i][3]);
    }
    return b;
  };

  V.fit = function () { this.fitTo(this.allBounds()); };

  // The whole picture when it can be read at that size; else its top (the inputs) at a
  // readable size, centred, the rest a drag or a wheel away.
  V.firstView = function () {
    var b = this.allBounds();
    if (!isFinite(b[0])) return;
    var width = this.canvas.clientWidth || 800, height = this.canvas.clientHeight || 600;
    var margin = 30;
    var whole = Math.min((width - 2 * margin) / Math.max(b[2] - b[0], 1),
                         (height - 2 * margin) / Math.max(b[3] - b[1], 1));
    if (whole >= 0.6) { this.fitTo(b); return; }
    var k = Math.min(Math.max((width - 2 * margin) / Math.max(b[2] - b[0], 1), 0.6), 1);
    this.view = {k: k, x: width / 2 - k * (b[0] + b[2]) / 2, y: margin - k * b[1]};
    this.applyView();
  };

  V.centreOn = function (items) {
    var b = this.bounds(items);
    if (!isFinite(b[0])) return;
    var width = this.canvas.clientWidth || 800, height = this.canvas.clientHeight || 600;
    if ((b[2] - b[0]) * this.view.k > width || (b[3] - b[1]) * this.view.k > height || this.view.k < 0.6) {
      this.fitTo(b, 1.2);
      return;
    }
    this.view.x = width / 2 - this.view.k * (b[0] + b[2]) / 2;
    this.view.y = height / 2 - this.view.k * (b[1] + b[3]) / 2;
    this.applyView();
  };

  V.bindPointer = function () {
    var self = this, picture = this.svg, start = null;
    picture.addEventListener("wheel", function (event) {
      event.preventDefault();
      var rect = picture.getBoundingClientRect();
      var px = event.clientX - rect.left, py = event.clientY - rect.top;
      var v = self.view, factor = Math.exp(-event.deltaY * 0.0015);
      var k = Math.min(Math.max(v.k * factor, 0.02), 8);
      v.x = px - (px - v.x) * (k / v.k);
      v.y = py - (py - v.y) * (k / v.k);
      v.k = k;
      self.applyView();
    }, {passive: false});
    picture.addEventListener("mousedown", function (event) {
      if (event.button !== 0) return;
      start = {x: event.clientX, y: event.clientY, vx: self.view.x, vy: self.view.y};
      self.dragged = false;
    });
    window.addEventListener("mousemove", function (event) {
      if (!start) return;
      var dx = event.clientX - start.x, dy = event.clientY - start.y;
      if (!self.dragged && Math.abs(dx) + Math.abs(dy) < 4) return;
      self.dragged = true;
      self.view.x = start.vx + dx;
      self.view.y = start.vy + dy;
      self.applyView();
    });
    window.addEventListener("mouseup", function () {
      start = null;
      setTimeout(function () { self.dragged = false; }, 0);
    });
  };

  // -- expanding and collapsing ------------------------------------------------------------

  V.clickItem = function (item) {
    if (item >= this.N) {
      var g = item - this.N;
      this.open[g] = 1;
      this.relayout();
      var inside = [];
      for (var i = 0; i < this.layout.items.length; i++) {
        if (this.contains(g, this.layout.items[i])) inside.push(this.layout.items[i]);
      }
      this.centreOn(inside);
      this.showGroup(g);
      return;
    }
    this.select(item);
  };

  V.contains = function (g, item) {
    var parents = this.data.groups.parent;
    var owner = item < this.N ? this.data.nodes.group[item] : parents[item - this.N];
    while (owner >= 0) { if (owner === g) return true; owner = parents[owner]; }
    return false;
  };

  V.collapse = function (g) {
    this.open[g] = 0;
    for (var h = 0; h < this.G; h++) if (this.open[h] && this.contains(g, this.N + h)) this.open[h] = 0;
    this.relayout();
    this.centreOn([this.N + g]);
  };

  V.collapseAll = function () {
    this.open.fill(0);
    this.relayout();
    this.firstView();
  };

  V.reveal = function (node) {
    var g = this.data.nodes.group[node], changed = false;
    while (g >= 0) {
      if (!this.open[g]) { this.open[g] = 1; changed = true; }
      g = this.data.groups.parent[g];
    }
    if (changed) this.relayout();
  };

  function mount(host, data) {
    if (!host) throw new Error("gradprobe viewer: no element to mount in");
    var viewer = new Viewer(host, data);
    host.gradprobeViewer = viewer;
    return viewer;
  }

  return {
    mount: mount,
    Viewer: Viewer,
    util: {el: el, svg: svg, fmt: fmt, shapeText: shapeText, baseName: baseName},
    version: 1
  };
})(gradprobeLayout);
window.gradprobeViewer = gradprobeViewer;
