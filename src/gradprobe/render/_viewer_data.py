"""What the interactive viewer shows, as one JSON-ready dict: plain data in, plain data out.

The viewer (``viewer/viewer.js``) never sees gradprobe objects; this module turns a
:class:`~gradprobe.graph.Graph` (plus, when given, a recording's source lines and
findings, and a watch session's gradient statistics) into columns of builtins:

- ``nodes``: label, autograd name, kind, group, forward position and source line of every
  node, one list per field (a 100k-node graph is a few MB of JSON, not objects);
- ``edges``: ``[input, consumer, ...]`` pairs in forward (data-flow) direction;
- ``groups``: the tree the viewer expands and collapses: one group per module (paths
  from :func:`gradprobe._layout.infer_modules`, or whatever ``paths`` says), and, where a
  module or the top level holds more than :data:`CAP` items, *chunks* of consecutive
  items in forward order, nested until no level holds more than :data:`CAP`; so the
  first picture of any graph, 100 or 100,000 nodes, has at most a few dozen boxes;
- ``findings``: each finding with the graph nodes its slice maps onto (joined by
  ``(name, sequence_nr)``, the key a traced node and a recorded node share, or by leaf
  name), its marked culprits, cuts and parameters without gradient.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from gradprobe._layout import infer_modules
from gradprobe.findings import Finding, Location
from gradprobe.graph import Graph, Node

__all__ = ["CAP", "SourceLine", "StatsRecord", "viewer_data"]

CAP = 50
"""At most this many boxes in one module (or the top level) before it is chunked."""

BUDGET = 80
"""The viewer opens groups, outermost first, while it shows at most this many boxes."""

FORMAT = 1

SourceLine = tuple[str, int, str]  # (co_filename, line, function), as the recorder keeps it

_KINDS = ("op", "custom_function", "checkpoint", "compiled", "parameter", "buffer", "input")
_KIND_INDEX = {kind: index for index, kind in enumerate(_KINDS)}
_MAX_SAVED = 24
_MAX_FINDING_NODES = 200


class StatsRecord(Protocol):
    """What the viewer reads of one watched step (``gradprobe`` watch's ``StepRecord``)."""

    step: int
    gradients: Sequence[Any]


def _kind(node: Node) -> int:
    if node.leaf is not None:
        return _KIND_INDEX.get(node.leaf.kind, _KIND_INDEX["input"])
    return _KIND_INDEX.get(node.kind, 0)


def forward_positions(graph: Graph) -> list[int]:
    """Each node's place in a forward (inputs first) topological order of ``graph``: the
    order the forward pass created the ops (``sequence_nr``), each parameter (and any
    other node without a number) just before the first op that reads it."""
    count = len(graph.nodes)
    waiting = [0] * count  # consumers not yet placed
    for edge in graph.edges:
        waiting[edge.dst] += 1
    # Walk backwards from the outputs, always taking the latest-made ready node (a heap
    # on -priority); a node without a sequence number goes right after its consumer.
    priority = [float(n.sequence_nr) if n.sequence_nr is not None else -1.0 for n in graph.nodes]
    ready = [(-priority[i], i) for i in range(count) if not waiting[i]]
    heapq.heapify(ready)
    backward: list[int] = []
    seen = [False] * count
    while ready:
        _, node = heapq.heappop(ready)
        if seen[node]:
            continue
        seen[node] = True
        backward.append(node)
        for edge in graph.children(node):
            child = edge.dst
            waiting[child] -= 1
            if not waiting[child]:
                if graph.nodes[child].sequence_nr is None:
                    priority[child] = math.inf
                heapq.heappush(ready, (-priority[child], child))
    backward.extend(i for i in range(count) if not seen[i])  # never happens: no cycles
    position = [0] * count
    for index, node in enumerate(reversed(backward)):
        position[node] = index
    return position


# -- the tree of groups ---------------------------------------------------------------------


class _Tree:
    """Groups (modules, then chunks) over the nodes; index -1 is the top level."""

    def __init__(self, graph: Graph, paths: Sequence[tuple[str, ...]], position: list[int]):
        self.graph = graph
        self.position = position
        self.label: list[str] = []
        self.path: list[str] = []
        self.parent: list[int] = []
        self.kind: list[str] = []
        self.items: dict[int, list[tuple[int, int]]] = {-1: []}  # group -> (is_group, id)
        self.node_group = [-1] * len(graph.nodes)
        index: dict[tuple[str, ...], int] = {}
        for node_id, parts in enumerate(paths):
            group = -1
            for depth in range(1, len(parts) + 1):
                key = parts[:depth]
                found = index.get(key)
                if found is None:
                    found = index[key] = self._add(".".join(key), key[-1], group, "module")
                group = found
            self.node_group[node_id] = group
            self.items[group].append((0, node_id))
        self.first: list[int] = []

    def _add(self, path: str, label: str, parent: int, kind: str) -> int:
        gid = len(self.label)
        self.label.append(label)
        self.path.append(path)
        self.parent.append(parent)
        self.kind.append(kind)
        self.items[gid] = []
        self.items[parent].append((1, gid))
        return gid

    def _first(self, item: tuple[int, int]) -> int:
        return self.first[item[1]] if item[0] else self.position[item[1]]

    def _item_label(self, item: tuple[int, int], *, last: bool = False) -> str:
        is_group, ident = item
        if not is_group:
            return self.graph.nodes[ident].label
        if self.kind[ident] == "module":
            return self.path[ident]
        inner = self.items[ident]
        return self._item_label(inner[-1] if last else inner[0], last=last)

    def finish(self) -> None:
        """Compute each group's first position; chunk every level above :data:`CAP`."""
        self._compute_first()
        for group in [-1, *range(len(self.label))]:
            self._chunk(group)
        self._compute_first()
        self._number_chunks()

    def _number_chunks(self) -> None:
        """Add to each chunk's label where it lies in forward order: ``(#1–2,500)``."""
        last = [-1] * len(self.label)
        for node_id, group in enumerate(self.node_group):
            pos = self.position[node_id]
            while group >= 0:
                if pos > last[group]:
                    last[group] = pos
                group = self.parent[group]
        for group, kind in enumerate(self.kind):
            if kind == "chunk":
                span = f"#{self.first[group] + 1:,}–{last[group] + 1:,}"
                self.label[group] = f"{self.label[group]} ({span})"

    def _compute_first(self) -> None:
        first = [len(self.position)] * len(self.label)
        for node_id, group in enumerate(self.node_group):
            pos = self.position[node_id]
            while group >= 0 and pos < first[group]:
                first[group] = pos
                group = self.parent[group]
        self.first = first

    def _chunk(self, group: int) -> None:
        items = sorted(self.items[group], key=self._first)
        while len(items) > CAP:
            self.items[group] = []
            chunks = []
            for start in range(0, len(items), CAP):
                part = items[start : start + CAP]
                label = f"{self._item_label(part[0])} … {self._item_label(part[-1], last=True)}"
                owner = self.path[group] if group >= 0 else ""
                chunk = self._add(owner, label, group, "chunk")
                self.first.append(self._first(part[0]))
                self.items[chunk] = part
                for is_group, ident in part:
                    if is_group:
                        self.parent[ident] = chunk
                    else:
                        self.node_group[ident] = chunk
                chunks.append((1, chunk))
            items = chunks
        self.items[group] = items

    def ordered(self) -> list[int]:
        """Group ids, parents before children, siblings in forward order."""
        out: list[int] = []
        stack = [-1]
        while stack:
            group = stack.pop()
            if group >= 0:
                out.append(group)
            children = [ident for is_group, ident in self.items[group] if is_group]
            children.sort(key=lambda g: self.first[g], reverse=True)
            stack.extend(children)
        return out


def _sizes(tree: _Tree) -> tuple[list[int], list[int]]:
    """Nodes, and parameters, inside each group (its subgroups included)."""
    size = [0] * len(tree.label)
    params = [0] * len(tree.label)
    for node, group in zip(tree.graph.nodes, tree.node_group, strict=True):
        is_param = node.leaf is not None and node.leaf.kind == "parameter"
        while group >= 0:
            size[group] += 1
            params[group] += is_param
            group = tree.parent[group]
    return size, params


# -- the dict ---------------------------------------------------------------------------------


def _location(line: SourceLine | None) -> list[Any] | None:
    from gradprobe._source import line_location

    found = line_location(line, "created")
    if found is None:
        return None
    return [found.file, found.line, found.function or "", found.text or ""]


def _loc(location: Location) -> dict[str, Any]:
    return {
        "role": location.role,
        "file": location.file,
        "name": Path(location.file).name,
        "line": location.line,
        "text": location.text or "",
    }


def _saved_rows(node: Node) -> list[list[Any]]:
    rows = []
    for saved in node.saved[:_MAX_SAVED]:
        shape = "×".join(map(str, saved.shape)) if saved.dtype != "unknown" else ""
        rows.append(
            [
                saved.slot,
                f"{shape} {saved.dtype}".strip() if saved.dtype != "unknown" else "",
                saved.version_now,
                saved.version_saved,
                1 if saved.stale else 0,
                saved.name or "",
                saved.packed or "",
            ]
        )
    return rows


def viewer_data(
    graph: Graph,
    *,
    title: str,
    paths: Sequence[tuple[str, ...]] | None = None,
    lines: Mapping[tuple[str, int], SourceLine | None] | None = None,
    findings: Sequence[Finding] = (),
    history: Iterable[StatsRecord] = (),
    notes: Sequence[str] = (),
    summary: str | None = None,
) -> dict[str, Any]:
    """Everything the viewer shows of ``graph``, as JSON-ready builtins.

    ``paths`` gives each node's group path (default: its module, inferred from parameter
    names); ``lines`` maps ``(node name, sequence_nr)`` to the forward line that made the
    node; ``history`` is a watch session's step records; ``summary`` heads the side
    panel (default: the graph's ``repr``).
    """
    nodes = graph.nodes
    if paths is None:
        modules = infer_modules(graph)
        paths = [tuple(m.split(".")) if m else () for m in modules or [""] * len(nodes)]
    position = forward_positions(graph)
    tree = _Tree(graph, paths, position)
    tree.finish()
    order = tree.ordered()
    new = {old: index for index, old in enumerate(order)}
    new[-1] = -1
    line_table: list[list[Any]] = []
    line_index: dict[SourceLine, int] = {}
    node_lines = [-1] * len(nodes)
    if lines:
        for node in nodes:
            line = (
                lines.get((node.name, node.sequence_nr)) if node.sequence_nr is not None else None
            )
            if line is None:
                continue
            found = line_index.get(line)
            if found is None:
                location = _location(line)
                found = line_index[line] = len(line_table) if location else -1
                if location:
                    line_table.append(location)
            node_lines[node.id] = found
    leaves: dict[str, Any] = {}
    saved: dict[str, Any] = {}
    meta: dict[str, Any] = {}
    for node in nodes:
        if node.leaf is not None:
            leaf = node.leaf
            leaves[str(node.id)] = {
                "name": leaf.name,
                "kind": leaf.kind,
                "shape": list(leaf.shape),
                "dtype": leaf.dtype,
                "device": leaf.device,
                "requires_grad": leaf.requires_grad,
                "has_grad": leaf.has_grad,
                "retains_grad": leaf.retains_grad,
            }
        if node.saved:
            saved[str(node.id)] = _saved_rows(node)
        if node.metadata:
            meta[str(node.id)] = dict(node.metadata)
    size, params = _sizes(tree)
    keys = _keys(graph) if findings else ({}, {})
    return {
        "format": FORMAT,
        "title": title,
        "summary": summary or repr(graph).strip("<>"),
        "budget": BUDGET,
        "kinds": list(_KINDS),
        "nodes": {
            "label": [node.label for node in nodes],
            "name": [node.name for node in nodes],
            "kind": [_kind(node) for node in nodes],
            "group": [new[g] for g in tree.node_group],
            "pos": position,
            "line": node_lines,
            "freed": [node.id for node in nodes if node.freed],
        },
        "edges": [end for edge in graph.edges for end in (edge.dst, edge.src)],
        "lines": line_table,
        "leaves": leaves,
        "saved": saved,
        "meta": meta,
        "roots": [
            {"name": root.name, "node": root.node, "note": root.note or ""} for root in graph.roots
        ],
        "groups": {
            "label": [tree.label[g] for g in order],
            "path": [tree.path[g] for g in order],
            "parent": [new[tree.parent[g]] for g in order],
            "kind": [tree.kind[g] for g in order],
            "size": [size[g] for g in order],
            "params": [params[g] for g in order],
        },
        "findings": [_finding(finding, *keys) for finding in findings],
        "watch": _watch(graph, history),
        "notes": [*graph.notes, *notes],
    }


# -- findings and watch statistics --------------------------------------------------------------


def _keys(graph: Graph) -> tuple[dict[tuple[str, int], int], dict[str, int]]:
    """Node ids by ``(name, sequence_nr)``, and leaf node ids by leaf name."""
    by_key: dict[tuple[str, int], int] = {}
    by_leaf: dict[str, int] = {}
    for node in graph.nodes:
        if node.sequence_nr is not None:
            by_key.setdefault((node.name, node.sequence_nr), node.id)
        if node.leaf is not None and node.leaf.name:
            by_leaf.setdefault(node.leaf.name, node.id)
    return by_key, by_leaf


def _finding(
    finding: Finding, by_key: Mapping[tuple[str, int], int], by_leaf: Mapping[str, int]
) -> dict[str, Any]:
    """A finding, and the nodes of the graph its slice maps onto."""
    part = finding.graph_slice
    mapped: dict[int, int] = {}
    marks: list[list[Any]] = []
    cuts: list[dict[str, Any]] = []
    missing: list[dict[str, Any]] = []
    if part is not None:
        for node in part.graph.nodes:
            found = None
            if node.sequence_nr is not None:
                found = by_key.get((node.name, node.sequence_nr))
            elif node.leaf is not None and node.leaf.name:
                found = by_leaf.get(node.leaf.name)
            if found is not None:
                mapped[node.id] = found
        marks = [[mapped.get(mark.node), mark.kind, mark.text] for mark in part.marks]
        cuts = [
            {
                "op": cut.op,
                "where": cut.where,
                "node": mapped.get(cut.node) if cut.node is not None else None,
                "source": mapped.get(cut.source) if cut.source is not None else None,
            }
            for cut in part.cuts
        ]
        missing = [
            {"name": leaf.name, "reason": leaf.reason, "node": by_leaf.get(leaf.name)}
            for leaf in part.missing
        ]
    named = [by_leaf[name] for name in (finding.parameter,) if name and name in by_leaf]
    missing_nodes = [m["node"] for m in missing if m["node"] is not None]
    slice_nodes = sorted({*mapped.values(), *named, *missing_nodes})[:_MAX_FINDING_NODES]
    return {
        "code": finding.code,
        "kind": finding.kind,
        "title": finding.title,
        "message": finding.message,
        "hint": finding.hint,
        "doc": finding.doc,
        "locations": [_loc(loc) for loc in finding.locations],
        "nodes": slice_nodes,
        "slice": len(part.graph) if part is not None else 0,
        "marks": marks,
        "cuts": cuts,
        "missing": missing,
        "problem": sorted(
            {m[0] for m in marks if m[0] is not None}
            | {m["node"] for m in missing if m["node"] is not None}
            | set(named)
        ),
    }


def _number(value: float | None) -> float | str | None:
    if value is None:
        return None
    if not math.isfinite(value):
        return str(value)
    return float(f"{value:.6g}")


def _watch(graph: Graph, history: Iterable[StatsRecord]) -> dict[str, Any]:
    """Per parameter node: the gradient norm, mean and max magnitude at each sampled step."""
    leaf_ids = {
        node.leaf.name: node.id
        for node in graph.nodes
        if node.leaf is not None and node.leaf.name is not None
    }
    out: dict[str, dict[str, list[Any]]] = {}
    for record in history:
        for grad in record.gradients:
            if grad.kind != "parameter" or grad.name not in leaf_ids:
                continue
            stats = grad.stats
            if stats.norm is None:
                continue  # a step between samples: only the sum was kept
            row = out.setdefault(
                str(leaf_ids[grad.name]), {"step": [], "norm": [], "mean_abs": [], "max_abs": []}
            )
            row["step"].append(record.step)
            row["norm"].append(_number(stats.norm))
            row["mean_abs"].append(_number(stats.mean_abs))
            row["max_abs"].append(_number(stats.max_abs))
    return out
