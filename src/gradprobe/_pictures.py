"""The slice of the backward graph a finding is about, as plain data, for its picture.

A recording hands each finding to :func:`illustrate` with what it recorded (and, at a
``backward()`` call, the graph traced from its roots); the finding comes back with a
:class:`~gradprobe.graph.GraphSlice`: the few nodes around the problem, the culprits
marked (a stale saved tensor and the line that wrote over it, the node that made the first
NaN/Inf, the node a cut value flowed into), where the graph was cut, and the parameters
left without gradient. Renderers draw it (``gradprobe.render.picture``) and never see
autograd: everything here is names, lines and versions.

Findings are joined to recorded nodes by source line (``Location`` and the recorder's
``(co_filename, line, function)``), the only key both sides share.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from gradprobe._recorder import Events, NodeKey, SourceLine
from gradprobe._source import line_location
from gradprobe.findings import Finding, Location
from gradprobe.graph import (
    CutMark,
    Edge,
    FrozenMap,
    Graph,
    GraphSlice,
    Leaf,
    Mark,
    MarkKind,
    MissingLeaf,
    Node,
)

__all__ = [
    "cuts_slice",
    "illustrate",
    "leaf_slice",
    "neighbourhood",
    "recorded_slice",
    "where",
]

_MAX_NODES = 24  # a picture, not a graph: the problem and what touches it
_UP = 2  # consumers above a culprit (towards the loss)
_DOWN = 3  # inputs below it (towards the leaves)
_ROLES_FOR_FOCUS = ("cause", "created", "saved", "error", "read")


def where(location: Location | None) -> str:
    """``"train.py:42: b[1] = 2"`` (file name, line, source text)."""
    if location is None:
        return "an unknown line"
    text = f"{Path(location.file).name}:{location.line}"
    return f"{text}: {location.text}" if location.text else text


def _short(line: SourceLine | None) -> str:
    if line is None:
        return "an unknown line"
    return f"{Path(line[0]).name}:{line[1]}"


# -- slicing a traced graph ----------------------------------------------------------------------


def neighbourhood(
    graph: Graph, focus: Sequence[int], *, up: int = _UP, down: int = _DOWN
) -> tuple[Graph, dict[int, int]]:
    """The nodes of ``graph`` within ``up`` consumers and ``down`` inputs of ``focus``
    (at most ``_MAX_NODES``, nearest first), renumbered; and old id -> new id."""
    keep: dict[int, int] = {}  # node -> distance
    queue: deque[tuple[int, int, int]] = deque((node, 0, 0) for node in focus)
    while queue and len(keep) < _MAX_NODES:
        node, ups, downs = queue.popleft()
        if node in keep:
            continue
        keep[node] = ups + downs
        if ups < up and downs == 0:
            queue.extend((edge.src, ups + 1, 0) for edge in graph.parents(node))
        if downs < down and ups == 0:
            queue.extend((edge.dst, 0, downs + 1) for edge in graph.children(node))
    order = sorted(keep)
    new = {old: index for index, old in enumerate(order)}
    nodes = tuple(replace(graph.nodes[old], id=new[old]) for old in order)
    edges = tuple(
        Edge(new[e.src], new[e.dst], e.slot, e.input_nr)
        for e in graph.edges
        if e.src in new and e.dst in new
    )
    roots = tuple(
        replace(root, node=new[root.node])
        for root in graph.roots
        if root.node is not None and root.node in new
    )
    return Graph(nodes=nodes, edges=edges, roots=roots), new


# -- a graph from what the recorder saw ----------------------------------------------------------


class _Recorded:
    """The recorder's nodes as a graph: children found from the consumers it noted."""

    def __init__(self, events: Events, home: str | None = None) -> None:
        self.home = os.path.realpath(home) if home else None  # lines here show as "line N"
        self.nodes = events.nodes
        self._children: dict[NodeKey, list[NodeKey]] | None = None
        self._paths: dict[str, str] = {}

    @property
    def children(self) -> dict[NodeKey, list[NodeKey]]:
        if self._children is None:
            children: dict[NodeKey, list[NodeKey]] = {}
            for key, record in self.nodes.items():
                for parent in record.consumers:
                    children.setdefault(parent, []).append(key)
            self._children = children
        return self._children

    def path(self, filename: str) -> str:
        found = self._paths.get(filename)
        if found is None:
            found = filename if filename.startswith("<") else os.path.realpath(filename)
            self._paths[filename] = found
        return found

    def at(self, locations: Iterable[Location]) -> list[NodeKey]:
        """Recorded nodes made at any of ``locations``, in the order they were made."""
        wanted = {(os.path.realpath(loc.file), loc.line) for loc in locations}
        if not wanted:
            return []
        lines = {line for _, line in wanted}
        return [
            key
            for key, record in self.nodes.items()
            if record.line is not None
            and record.line[1] in lines
            and (self.path(record.line[0]), record.line[1]) in wanted
        ]

    def short(self, line: SourceLine) -> str:
        if self.path(line[0]) == self.home:
            return f"line {line[1]}"
        return _short(line)

    def graph(
        self, focus: Sequence[NodeKey], up: int = _UP, down: int = _DOWN
    ) -> tuple[Graph, dict[NodeKey, int]]:
        """The recorded nodes around ``focus`` as a :class:`Graph` (no shapes: the
        recorder keeps lines and versions, not tensors)."""
        keep: dict[NodeKey, None] = {}
        queue: deque[tuple[NodeKey, int, int]] = deque((key, 0, 0) for key in focus)
        while queue and len(keep) < _MAX_NODES:
            key, ups, downs = queue.popleft()
            if key in keep or key not in self.nodes:
                continue
            keep[key] = None
            if ups < up and downs == 0:
                queue.extend((parent, ups + 1, 0) for parent in self.nodes[key].consumers)
            if downs < down and ups == 0:
                queue.extend((child, 0, downs + 1) for child in self.children.get(key, ()))
        order = sorted(keep, key=lambda k: -self.nodes[k].order)  # outputs first
        ids = {key: index for index, key in enumerate(order)}
        nodes = []
        for key in order:
            record = self.nodes[key]
            metadata = {"made at": self.short(record.line)} if record.line is not None else {}
            nodes.append(
                Node(
                    id=ids[key],
                    name=record.op,
                    kind="op",
                    sequence_nr=key[1],
                    metadata=FrozenMap(metadata),
                )
            )
        edges = []
        for key in order:
            for slot, child in enumerate(self.children.get(key, ())):
                if child in ids:
                    edges.append(Edge(ids[key], ids[child], slot, 0))
        return Graph(nodes=tuple(nodes), edges=tuple(edges), roots=()), ids


# -- slices a check attaches where it makes its finding ----------------------------------------


def recorded_slice(
    events: Events,
    keys: Sequence[NodeKey],
    text: str,
    *,
    home: str | None = None,
    kind: MarkKind = "problem",
) -> GraphSlice | None:
    """The recorded nodes around ``keys`` (a hooked node, the node of a tensor), each of
    them marked with ``text``; None when none of them was recorded. Lines in ``home`` (the
    finding's file) show as ``line N``."""
    found = [key for key in dict.fromkeys(keys) if key in events.nodes]
    if not found:
        return None
    graph, ids = _Recorded(events, home).graph(found)
    return GraphSlice(graph, tuple(Mark(ids[key], kind, text) for key in found if key in ids))


def leaf_slice(
    name: str,
    text: str,
    *,
    shape: tuple[int, ...] = (),
    dtype: str = "unknown",
    device: str = "cpu",
    parameter: bool = True,
) -> GraphSlice:
    """One leaf (a parameter, or a tensor made with ``requires_grad=True``) marked with
    ``text``: what a finding about a leaf itself draws (written in place, a freeze that
    did nothing), when no recorded node is about it."""
    leaf = Leaf(
        name=name,
        kind="parameter" if parameter else "tensor",
        shape=shape,
        dtype=dtype,
        device=device,
        requires_grad=True,
        is_leaf=True,
        retains_grad=False,
        has_grad=False,
    )
    node = Node(id=0, name="torch::autograd::AccumulateGrad", kind="accumulate_grad", leaf=leaf)
    graph = Graph(nodes=(node,), edges=(), roots=())
    return GraphSlice(graph, (Mark(0, "problem", text),))


def cuts_slice(
    events: Events, idents: Sequence[int], *, home: str | None = None
) -> GraphSlice | None:
    """The cuts ``idents`` (``events.cuts`` keys), each a dashed box fed by the recorded
    node whose value it cut; None when none of them is recorded."""
    cuts = sorted(
        ((ident, events.cuts[ident]) for ident in idents if ident in events.cuts),
        key=lambda item: item[1].order,
    )
    if not cuts:
        return None
    recorded = _Recorded(events, home)
    sources = _cut_inputs(events)
    graph, ids = recorded.graph([sources[i] for i, _ in cuts if i in sources], down=1)
    marks: list[CutMark] = []
    seen = set()
    for ident, cut in cuts:
        if (cut.op, cut.line) in seen:
            continue
        seen.add((cut.op, cut.line))
        source = sources.get(ident)
        at = where(line_location(cut.line, "cause"))
        marks.append(CutMark(cut.op, at, None, ids.get(source) if source is not None else None))
    return GraphSlice(graph, (), tuple(marks))


# -- per finding -----------------------------------------------------------------------------


def illustrate(finding: Finding, events: Events, live: Graph | None = None) -> Finding:
    """``finding`` with its :attr:`~gradprobe.findings.Finding.graph_slice` filled from
    ``live`` (a graph traced at the backward that found it) or what ``events`` recorded.
    Never fails: a finding that cannot be placed in a graph gets an empty slice (its
    picture then shows its cause line and names)."""
    if finding.graph_slice is not None:
        return finding
    try:
        found = _slice(finding, events, live)
    except Exception:  # noqa: BLE001  (a picture is never worth losing a finding)
        found = None
    empty = Graph(nodes=(), edges=(), roots=())
    return replace(finding, graph_slice=found or GraphSlice(empty))


def _slice(finding: Finding, events: Events, live: Graph | None) -> GraphSlice | None:
    if live is not None and len(live):
        stale = [node.id for node in live.nodes if any(s.stale for s in node.saved)]
        named = [node.id for node in live.nodes if finding.node and node.name == finding.node]
        if stale or named:
            return _stale_slice(finding, live, stale or named)
    cause = finding.cause or (finding.locations[0] if finding.locations else None)
    recorded = _Recorded(events, cause.file if cause else None)
    if finding.code in ("GP113",):
        return _cut_slice(finding, events, recorded)
    if finding.code == "GP107":
        return _missing_slice(finding, events, recorded)
    if finding.code == "GP202" and events.nan_node is not None:
        graph, ids = recorded.graph([events.nan_node])
        if events.nan_node in ids:
            mark = Mark(
                ids[events.nan_node],
                "nonfinite",
                "backward made the first NaN/Inf gradient here from finite ones",
            )
            return GraphSlice(graph, (mark,))
    return _line_slice(finding, recorded)


def _stale_slice(finding: Finding, live: Graph, focus: list[int]) -> GraphSlice:
    graph, ids = neighbourhood(live, focus)
    cause = finding.cause
    marks = []
    for old in focus:
        node = live.nodes[old]
        stale = [s for s in node.saved if s.stale]
        if stale:
            versions = "; ".join(
                f"{s.slot} saved at v{s.version_saved}, now v{s.version_now}" for s in stale
            )
            text = f"{versions}: overwritten at {where(cause)}"
        else:
            text = f"needs a saved tensor that was modified in place at {where(cause)}"
        marks.append(Mark(ids[old], "stale", text))
    return GraphSlice(graph, tuple(marks))


def _line_slice(finding: Finding, recorded: _Recorded) -> GraphSlice | None:
    """The recorded nodes made on the finding's lines, cause first."""
    for role in _ROLES_FOR_FOCUS:
        locations = [loc for loc in finding.locations if loc.role == role]
        keys = recorded.at(locations)
        if finding.node and keys:  # GP201 names the op: prefer its node on that line
            op = finding.node.lower()
            exact = [k for k in keys if recorded.nodes[k].op.lower().startswith(op)]
            keys = exact or keys
        if keys:
            keys = keys[-1:]  # the last one made there: the value that went on
            graph, ids = recorded.graph(keys)
            kind: MarkKind = "nonfinite" if finding.code == "GP201" else "problem"
            text = {
                "GP201": "the forward pass made its first NaN here",
            }.get(finding.code, f"{finding.title} ({role} line)")
            marks = [Mark(ids[key], kind, text) for key in keys if key in ids]
            if finding.code == "GP201":
                earlier = [loc for loc in finding.locations if loc.role == "created"]
                marks.extend(
                    Mark(ids[key], "nonfinite", "an infinity appeared here first")
                    for key in recorded.at(earlier)
                    if key in ids
                )
            return GraphSlice(graph, tuple(marks))
    return None


def _cuts_at(events: Events, locations: Sequence[Location]) -> list[tuple[int, Any]]:
    """Recorded cuts (ident, Cut) made at ``locations``, in order."""
    wanted = {(os.path.realpath(loc.file), loc.line) for loc in locations}
    found = []
    for ident, cut in events.cuts.items():
        line = cut.line
        if line is not None and (os.path.realpath(line[0]), line[1]) in wanted:
            found.append((ident, cut))
    return sorted(found, key=lambda item: item[1].order)


def _cut_inputs(events: Events) -> Mapping[int, NodeKey]:
    """cut ident -> the recorded node whose value it cut."""
    return {ident: key for key, ident in events.cut_inputs.items()}


def _cut_slice(finding: Finding, events: Events, recorded: _Recorded) -> GraphSlice | None:
    """GP113: the node where a term without gradient joined the loss, and the cuts that
    made the term, as dashed edges from the node whose value was cut."""
    joined = recorded.at([loc for loc in finding.locations if loc.role == "read"])[-1:]
    causes = [loc for loc in finding.locations if loc.role == "cause"]
    cuts = _cuts_at(events, causes)
    sources = _cut_inputs(events)
    focus = joined + [sources[i] for i, _ in cuts if i in sources]
    graph, ids = recorded.graph(focus, down=1)
    marks = [
        Mark(ids[key], "cut", "a term without gradient joins the loss here")
        for key in joined
        if key in ids
    ]
    target = ids.get(joined[0]) if joined else None
    cut_marks = []
    seen = set()
    for ident, cut in cuts:
        if (cut.op, cut.line) in seen:
            continue
        seen.add((cut.op, cut.line))
        location = next((loc for loc in causes if loc.line == cut.line[1]), None)
        source = sources.get(ident)
        cut_marks.append(
            CutMark(
                cut.op,
                where(location) if location else _short(cut.line),
                target,
                ids.get(source) if source is not None else None,
            )
        )
    if not cut_marks:
        ops = finding.details.get("cut_ops", ())
        cut_marks = [CutMark(op, where(loc), target) for op, loc in zip(ops, causes, strict=False)]
    return GraphSlice(graph, tuple(marks), tuple(cut_marks))


def _missing_slice(finding: Finding, events: Events, recorded: _Recorded) -> GraphSlice:
    """GP107: the parameters without gradient, greyed, and the cut between them and the
    loss when the finding names one."""
    causes = [loc for loc in finding.locations if loc.role == "cause"]
    cuts = _cuts_at(events, causes)
    sources = _cut_inputs(events)
    focus = [sources[i] for i, _ in cuts if i in sources][-1:]
    graph, ids = recorded.graph(focus)
    cut_marks: tuple[CutMark, ...] = ()
    if cuts:
        ident, cut = cuts[-1]
        source = sources.get(ident)
        cut_marks = (CutMark(cut.op, where(causes[0]), None, ids.get(source) if source else None),)
    reason = finding.message.split("; ", 1)[-1]
    names = finding.details.get("parameters") or ([finding.parameter] if finding.parameter else [])
    missing = tuple(
        MissingLeaf(str(name), reason, 0 if cut_marks else None) for name in list(names)[:12]
    )
    return GraphSlice(graph, (), cut_marks, missing)
