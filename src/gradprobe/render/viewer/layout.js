/* gradprobe viewer: layered layout of the boxes on screen. Plain JavaScript, no library.
 *
 * gradprobeLayout.layered(items, links, boxes, chains) places the visible boxes, inputs
 * at the top:
 *   items   box ids in forward order (the order the forward pass made them);
 *   links   {from, to, back} edges between boxes; `back` when `to` comes first in that
 *           order (two collapsed modules can feed each other), drawn against the flow;
 *   boxes   id -> {w, h}; x and y (centres) are filled in, and invisible points added;
 *   chains  id -> the open groups around it, outermost first.
 * A box gets the layer of its longest path from the inputs, then moves down to just
 * above its first reader; long edges pass through one invisible point per layer they
 * cross; each layer is ordered by barycentre sweeps that keep the boxes of one module
 * side by side; then boxes are pulled towards their neighbours, keeping order and gaps.
 * Returns {layers, routes}: routes[i] = {link, chain: [box ids along the edge]}.
 */
var gradprobeLayout = (function () {
  "use strict";

  var GAP_X = 22, GAP_Y = 46, DUMMY_W = 6, MAX_DUMMIES = 4000;
  var ORDER_ROUNDS = 6, PLACE_ROUNDS = 8;

  function layered(items, links, boxes, chains) {
    var layer = {}, i, p, link;
    var incoming = {}, outgoing = {};
    for (i = 0; i < items.length; i++) layer[items[i]] = 0;
    for (i = 0; i < links.length; i++) {
      link = links[i];
      var up = link.back ? link.to : link.from, down = link.back ? link.from : link.to;
      (incoming[down] = incoming[down] || []).push(up);
      (outgoing[up] = outgoing[up] || []).push(down);
    }
    // longest path from the inputs, along forward order
    for (i = 0; i < items.length; i++) {
      var preds = incoming[items[i]];
      if (!preds) continue;
      var best = 0;
      for (p = 0; p < preds.length; p++) best = Math.max(best, layer[preds[p]] + 1);
      layer[items[i]] = best;
    }
    // then each box moves down to just above its first reader: a parameter (and the
    // transpose of it) sits by the op that uses it, not in one long row at the top
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
    var nextDummy = -1, dummies = 0, routes = [];
    var above = {}, below = {};
    function connect(u, d) {
      (below[u] = below[u] || []).push(d);
      (above[d] = above[d] || []).push(u);
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
          chain.push(dummy);
        }
      }
      chain.push(bottom);
      for (var c = 0; c + 1 < chain.length; c++) connect(chain[c], chain[c + 1]);
      routes.push({link: link, chain: chain});
    }
    order(layers, above, below, chains);
    place(layers, boxes, above, below);
    return {layers: layers, routes: routes};
  }

  // One layer sorted by barycentre among siblings, one level of open modules at a time,
  // so the boxes of one module stay side by side.
  function clusterSort(row, centre, index, depth, chains) {
    var buckets = [], byKey = {}, i;
    for (i = 0; i < row.length; i++) {
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
      var members = buckets[i].items;
      if (buckets[i].key.charAt(0) === "g" && members.length > 1) {
        members = clusterSort(members, centre, index, depth + 1, chains);
      }
      for (var j = 0; j < members.length; j++) out.push(members[j]);
    }
    return out;
  }

  function order(layers, above, below, chains) {
    var index = {}, l;
    function number(row) { for (var i = 0; i < row.length; i++) index[row[i]] = i; }
    for (l = 0; l < layers.length; l++) number(layers[l]);
    function sweep(row, neighbours) {
      var centre = {}, i;
      for (i = 0; i < row.length; i++) {
        var list = neighbours[row[i]];
        if (!list || !list.length) { centre[row[i]] = index[row[i]]; continue; }
        var sum = 0;
        for (var j = 0; j < list.length; j++) sum += index[list[j]];
        centre[row[i]] = sum / list.length;
      }
      var sorted = clusterSort(row, centre, index, 0, chains);
      for (i = 0; i < row.length; i++) row[i] = sorted[i];
      number(row);
    }
    for (var round = 0; round < ORDER_ROUNDS; round++) {
      if (round % 2 === 0) for (l = 1; l < layers.length; l++) sweep(layers[l], above);
      else for (l = layers.length - 2; l >= 0; l--) sweep(layers[l], below);
    }
  }

  function place(layers, boxes, above, below) {
    var x = {}, l, i, row;
    function pack(row, want) {
      // The boxes as near their wishes as order and gaps allow: once pushed right from
      // the left end, once pushed left from the right end; the mean keeps every gap.
      var n = row.length, right = new Array(n), left = new Array(n), k, sep;
      for (k = 0; k < n; k++) {
        right[k] = want[k];
        if (k > 0) {
          sep = boxes[row[k - 1]].w / 2 + GAP_X + boxes[row[k]].w / 2;
          if (right[k] < right[k - 1] + sep) right[k] = right[k - 1] + sep;
        }
      }
      for (k = n - 1; k >= 0; k--) {
        left[k] = want[k];
        if (k < n - 1) {
          sep = boxes[row[k]].w / 2 + GAP_X + boxes[row[k + 1]].w / 2;
          if (left[k] > left[k + 1] - sep) left[k] = left[k + 1] - sep;
        }
      }
      for (k = 0; k < n; k++) x[row[k]] = (left[k] + right[k]) / 2;
    }
    for (l = 0; l < layers.length; l++) {
      row = layers[l];
      var start = [], at = 0;
      for (i = 0; i < row.length; i++) {
        start.push(at + boxes[row[i]].w / 2);
        at += boxes[row[i]].w + GAP_X;
      }
      pack(row, start);
    }
    function toward(row, neighbours) {
      var want = [];
      for (var k = 0; k < row.length; k++) {
        var list = neighbours[row[k]];
        if (!list || !list.length) { want.push(x[row[k]]); continue; }
        var sum = 0;
        for (var j = 0; j < list.length; j++) sum += x[list[j]];
        want.push(sum / list.length);
      }
      pack(row, want);
    }
    for (var round = 0; round < PLACE_ROUNDS; round++) {
      if (round % 2 === 0) for (l = 1; l < layers.length; l++) toward(layers[l], above);
      else for (l = layers.length - 2; l >= 0; l--) toward(layers[l], below);
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
  }

  return {layered: layered};
})();
window.gradprobeLayout = gradprobeLayout;
