/* gradprobe's interactive graph viewer. Plain JavaScript, no library, no network.
 *
 * mount(host, data) draws the data gradprobe/render/_viewer_data.py builds. Only what is
 * open is laid out: a collapsed module (or chunk of a long level) is one box, so a
 * 100,000-node graph starts as a few dozen boxes and each click lays out a few dozen more.
 * Layout is layered, inputs at the top: a layer per longest path from the inputs, long
 * edges routed through invisible points, boxes ordered by barycentre sweeps, then pulled
 * towards their neighbours. Box widths come from the browser's own text metrics, so every
 * label fits the font the page really uses.
 */
var gradprobeViewer = window.gradprobeViewer || (function () {
  "use strict";

  var SVGNS = "http:" + "//www.w3.org/2000/svg"; // a namespace name, never fetched
  var FAMILY = '"DejaVu Sans", Helvetica, Arial, sans-serif';
  var FONT = "12px " + FAMILY;
  var BOLD = "bold 12px " + FAMILY;
  var SMALL = "10px " + FAMILY;
  var PAD_X = 10, LINE = 15, SMALL_LINE = 13, PAD_Y = 7;
  var GAP_X = 22, GAP_Y = 46, DUMMY_W = 6, MAX_DUMMIES = 4000, MAX_RESULTS = 40;

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
        lines.push([shapeText(leaf.shape) + " " + leaf.dtype, SMALL]);
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
      lines.push(["\u25b8 " + groups.size[g] + (groups.size[g] === 1 ? " node" : " nodes") +
        (isChunk && groups.path[g] ? " of " + groups.path[g] : ""), SMALL]);
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
    // layers: longest path from the inputs, along forward order
    var boxes = {}, layer = {};
    for (i = 0; i < items.length; i++) {
      boxes[items[i]] = this.boxOf(items[i]);
      layer[items[i]] = 0;
    }
    var incoming = {};
    for (i = 0; i < links.length; i++) {
      var link = links[i];
      var up = link.back ? link.to : link.from, down = link.back ? link.from : link.to;
      (incoming[down] = incoming[down] || []).push(up);
    }
    for (i = 0; i < items.length; i++) {
      var preds = incoming[items[i]];
      if (!preds) continue;
      var best = 0;
      for (var p = 0; p < preds.length; p++) best = Math.max(best, layer[preds[p]] + 1);
      layer[items[i]] = best;
    }
    // then each box moves down to just above its first reader: a parameter (and the
    // transpose of it) sits by the op that uses it, not in one long row at the top
    var outgoing = {};
    for (i = 0; i < links.length; i++) {
      link = links[i];
      var from = link.back ? link.to : link.from, to = link.back ? link.from : link.to;
      (outgoing[from] = outgoing[from] || []).push(to);
    }
    for (i = items.length - 1; i >= 0; i--) {
      var succ = outgoing[items[i]];
      if (!succ) continue;
      var lowest = Infinity;
      for (p = 0; p < succ.length; p++) lowest = Math.min(lowest, layer[succ[p]]);
      if (lowest - 1 > layer[items[i]]) layer[items[i]] = lowest - 1;
    }
    var layers = [];
    for (i = 0; i < items.length; i++) {
      var l = layer[items[i]];
      while (layers.length <= l) layers.push([]);
      layers[l].push(items[i]);
    }
    // long edges pass through invisible points, one per layer crossed
    var nextDummy = -1, dummies = 0, chains = [];
    var neighboursUp = {}, neighboursDown = {};
    function connect(u, d) {
      (neighboursDown[u] = neighboursDown[u] || []).push(d);
      (neighboursUp[d] = neighboursUp[d] || []).push(u);
    }
    for (i = 0; i < links.length; i++) {
      link = links[i];
      var top = link.back ? link.to : link.from, bottom = link.back ? link.from : link.to;
      var chain = [top];
      var span = layer[bottom] - layer[top];
      if (span > 1 && dummies + span - 1 <= MAX_DUMMIES) {
        for (var s = layer[top] + 1; s < layer[bottom]; s++) {
          var dummy = nextDummy--;
          dummies++;
          boxes[dummy] = {item: dummy, w: DUMMY_W, h: 0, dummy: true};
          layers[s].push(dummy);
          layer[dummy] = s;
          chain.push(dummy);
        }
      }
      chain.push(bottom);
      for (var c = 0; c + 1 < chain.length; c++) connect(chain[c], chain[c + 1]);
      chains.push({link: link, chain: chain});
    }
    this.chains = this.chainsOf(items);
    this.orderLayers(layers, neighboursUp, neighboursDown);
    this.placeLayers(layers, boxes, neighboursUp, neighboursDown);
    this.layout = {items: items, boxes: boxes, links: chains, layers: layers};
    this.render();
  };

  // Boxes of one open module stay side by side in each layer: a layer is sorted by
  // barycentre among siblings, one level of modules at a time.
  V.clusterSort = function (row, centre, index, depth) {
    var buckets = [], byKey = {}, chains = this.chains;
    for (var i = 0; i < row.length; i++) {
      var chain = chains[row[i]];
      var key = chain && depth < chain.length ? "g" + chain[depth] : "i" + row[i];
      var bucket = byKey[key];
      if (!bucket) {
        bucket = byKey[key] = {key: key, items: [], sum: 0};
        buckets.push(bucket);
      }
      bucket.items.push(row[i]);
      bucket.sum += centre[row[i]];
    }
    buckets.sort(function (a, b) {
      return a.sum / a.items.length - b.sum / b.items.length ||
        index[a.items[0]] - index[b.items[0]];
    });
    var out = [];
    for (i = 0; i < buckets.length; i++) {
      var items = buckets[i].items;
      if (buckets[i].key.charAt(0) === "g" && items.length > 1) {
        items = this.clusterSort(items, centre, index, depth + 1);
      }
      for (var j = 0; j < items.length; j++) out.push(items[j]);
    }
    return out;
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

  V.orderLayers = function (layers, up, down) {
    var index = {}, self = this;
    function number(row) { for (var i = 0; i < row.length; i++) index[row[i]] = i; }
    for (var l = 0; l < layers.length; l++) number(layers[l]);
    function sweep(row, neighbours) {
      var centre = {};
      for (var i = 0; i < row.length; i++) {
        var list = neighbours[row[i]];
        if (!list || !list.length) { centre[row[i]] = index[row[i]]; continue; }
        var sum = 0;
        for (var j = 0; j < list.length; j++) sum += index[list[j]];
        centre[row[i]] = sum / list.length;
      }
      var sorted = self.clusterSort(row, centre, index, 0);
      for (i = 0; i < row.length; i++) row[i] = sorted[i];
      number(row);
    }
    for (var round = 0; round < 6; round++) {
      if (round % 2 === 0) for (l = 1; l < layers.length; l++) sweep(layers[l], up);
      else for (l = layers.length - 2; l >= 0; l--) sweep(layers[l], down);
    }
  };

  V.placeLayers = function (layers, boxes, up, down) {
    var x = {}, l, i, row;
    function pack(row, want) {
      // The boxes as near their wishes as order and gaps allow: once pushed right from
      // the left end, once pushed left from the right end; the mean keeps every gap.
      var n = row.length, right = new Array(n), left = new Array(n), i, sep;
      for (i = 0; i < n; i++) {
        right[i] = want[i];
        if (i > 0) {
          sep = boxes[row[i - 1]].w / 2 + GAP_X + boxes[row[i]].w / 2;
          if (right[i] < right[i - 1] + sep) right[i] = right[i - 1] + sep;
        }
      }
      for (i = n - 1; i >= 0; i--) {
        left[i] = want[i];
        if (i < n - 1) {
          sep = boxes[row[i]].w / 2 + GAP_X + boxes[row[i + 1]].w / 2;
          if (left[i] > left[i + 1] - sep) left[i] = left[i + 1] - sep;
        }
      }
      for (i = 0; i < n; i++) x[row[i]] = (left[i] + right[i]) / 2;
    }
    for (l = 0; l < layers.length; l++) {
      row = layers[l];
      var start = [], at = 0;
      for (i = 0; i < row.length; i++) { start.push(at + boxes[row[i]].w / 2); at += boxes[row[i]].w + GAP_X; }
      pack(row, start);
    }
    function toward(row, neighbours) {
      var want = [];
      for (var i = 0; i < row.length; i++) {
        var list = neighbours[row[i]];
        if (!list || !list.length) { want.push(x[row[i]]); continue; }
        var sum = 0;
        for (var j = 0; j < list.length; j++) sum += x[list[j]];
        want.push(sum / list.length);
      }
      pack(row, want);
    }
    for (var round = 0; round < 8; round++) {
      if (round % 2 === 0) for (l = 1; l < layers.length; l++) toward(layers[l], up);
      else for (l = layers.length - 2; l >= 0; l--) toward(layers[l], down);
    }
    var y = 0, minX = Infinity;
    for (l = 0; l < layers.length; l++) {
      row = layers[l];
      var height = 0;
      for (i = 0; i < row.length; i++) height = Math.max(height, boxes[row[i]].h);
      for (i = 0; i < row.length; i++) {
        var box = boxes[row[i]];
        box.x = x[row[i]];
        box.y = y + height / 2;
        minX = Math.min(minX, box.x - box.w / 2);
      }
      y += height + GAP_Y;
    }
    for (var key in boxes) boxes[key].x -= minX;
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
    var open = [];
    for (var g in bounds) open.push(+g);
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
      var label = svg("text", {x: b[0] + 8, y: b[1] + 13, "class": "gp-cluster-label",
        text: "\u25be " + (isChunk ? groups.label[g] : groups.path[g])}, frame);
      svg("title", {text: "click to collapse"}, label);
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
      this.row(table, "tensor", shapeText(leaf.shape) + " " + leaf.dtype + " on " + leaf.device);
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

  function mount(host, data) {
    if (!host) throw new Error("gradprobe viewer: no element to mount in");
    var viewer = new Viewer(host, data);
    host.gradprobeViewer = viewer;
    return viewer;
  }

  return {mount: mount, version: 1};
})();
window.gradprobeViewer = gradprobeViewer;
