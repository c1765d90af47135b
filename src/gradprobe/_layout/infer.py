"""Which module each node belongs to, and what a readable picture of a graph shows.

Pure data in, pure data out: this module reads a :class:`~gradprobe.graph.Graph` (never
torch, never Graphviz) and returns a :class:`View`, the plan a renderer draws.

**Module inference.** Parameter names say where a parameter lives
(``layer1.0.conv1.weight`` belongs to ``layer1.0.conv1``). An op that uses a parameter
directly, or through one view of it (``TBackward0`` for ``Linear``), is an *anchor* of the
parameter's module. Every other op is placed by forward time: sequence numbers order ops
the way the forward pass created them, so an op that ran between two anchors belongs to
their common module prefix. At the seam between two sibling blocks (``layer1.0`` then
``layer1.1``) the ops in between are split at the last *fan-out* (a value read by two or
more ops: a residual block's output feeds the next block's convolution and its skip
connection); ops up to the fan-out close the earlier block, ops after it open the next.
Ops after the last anchor (usually the loss) sit at the top level.

**Views.** ``full`` draws every node, in one cluster per container module. ``collapsed``
keeps the first of each run of identical consecutive sibling blocks (``layers.1`` …
``layers.23``) and replaces the rest by one summary box; if the picture is still larger
than a budget, whole modules become single boxes, deepest first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from gradprobe.graph import Graph, Node

__all__ = [
    "AUTO_FULL_MAX",
    "COLLAPSED_BUDGET",
    "Box",
    "Cluster",
    "Detail",
    "View",
    "ViewEdge",
    "build_view",
    "infer_modules",
    "node_key",
]

Detail = Literal["auto", "full", "collapsed"]

AUTO_FULL_MAX = 250
"""``detail="auto"`` draws every node up to this many nodes, and collapses above it."""

COLLAPSED_BUDGET = 300
"""The collapsed view boxes whole modules until it draws at most this many items."""

# Ops through which a module reaches its own parameter: ``Linear`` transposes its weight,
# autocast copies it to half precision, ``MultiheadAttention`` slices its packed in_proj.
_PARAM_VIEWS = frozenset(
    {
        "TBackward0",
        "ViewBackward0",
        "PermuteBackward0",
        "TransposeBackward0",
        "ExpandBackward0",
        "UnsqueezeBackward0",
        "SqueezeBackward0",
        "SqueezeBackward1",
        "ReshapeAliasBackward0",
        "UnsafeViewBackward0",
        "AliasBackward0",
        "SliceBackward0",
        "SelectBackward0",
        "SplitBackward0",
        "ToCopyBackward0",
    }
)

_NO_MODULE: tuple[str, ...] = ()


def node_key(node_id: int) -> str:
    """The DOT id of a graph node: stable, derived from ``node.id`` only."""
    return f"n{node_id}"


# -- module paths ------------------------------------------------------------------------------


def _parts(path: str) -> tuple[str, ...]:
    return tuple(path.split(".")) if path else _NO_MODULE


def _join(parts: Sequence[str]) -> str:
    return ".".join(parts)


def _common(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return a[:n]


def _deeper(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return a if len(a) >= len(b) else b


def _owner(node: Node) -> tuple[str, ...] | None:
    """The module owning a parameter or buffer leaf, or None for other nodes."""
    leaf = node.leaf
    if leaf is None or leaf.name is None or leaf.kind not in ("parameter", "buffer"):
        return None
    return _parts(leaf.name)[:-1]


# -- module inference --------------------------------------------------------------------------


def infer_modules(graph: Graph) -> tuple[str, ...] | None:
    """The module path of every node (``""`` for the top level), by node id.

    Returns None when no parameter or buffer in the graph has a name (trace without
    ``model=``), since then nothing can be placed.

    Example:
        >>> import torch, gradprobe
        >>> net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
        >>> graph = gradprobe.trace(net(torch.ones(1, 2)).sum(), model=net)
        >>> [(node.label, module) for node, module in zip(graph, infer_modules(graph))]
        [('Sum', ''), ('Relu', ''), ('Addmm', '0'), ('0.bias', '0'), ('T', '0'), ('0.weight', '0')]
    """
    owners = [_owner(node) for node in graph.nodes]
    if all(owner is None for owner in owners):
        return None
    modules: list[tuple[str, ...] | None] = list(owners)
    anchored = _anchor(graph, owners, modules)
    containers = {o[:i] for o in owners if o is not None for i in range(len(o))}
    _place_by_time(graph, modules, anchored, containers)
    _place_rest(graph, modules)
    return tuple(_join(module or _NO_MODULE) for module in modules)


def _anchor(
    graph: Graph,
    owners: list[tuple[str, ...] | None],
    modules: list[tuple[str, ...] | None],
) -> list[bool]:
    """Give every op that uses a named parameter (directly or via one view) its module."""
    anchored = [False] * len(graph.nodes)
    for node in graph.nodes:
        if node.leaf is not None:
            continue
        found: tuple[str, ...] | None = None
        for edge in graph.children(node.id):
            owner = owners[edge.dst]
            if owner is None:
                owner = _viewed_owner(graph, edge.dst, owners)
                if owner is not None:
                    modules[edge.dst] = owner
                    anchored[edge.dst] = True
            if owner is not None:
                found = owner if found is None else _common(found, owner)
        if found is not None:
            modules[node.id] = found
            anchored[node.id] = True
    return anchored


def _viewed_owner(
    graph: Graph, node_id: int, owners: list[tuple[str, ...] | None]
) -> tuple[str, ...] | None:
    node = graph.nodes[node_id]
    if node.name not in _PARAM_VIEWS:
        return None
    children = graph.children(node_id)
    if len(children) != 1:
        return None
    return owners[children[0].dst]


def _place_by_time(
    graph: Graph,
    modules: list[tuple[str, ...] | None],
    anchored: list[bool],
    containers: set[tuple[str, ...]],
) -> None:
    """Place free ops between the anchors that ran before and after them."""
    timeline = sorted(
        (node.sequence_nr, node.id)
        for node in graph.nodes
        if node.leaf is None and node.sequence_nr is not None
    )
    prev: int | None = None
    run: list[int] = []
    for _, node_id in timeline:
        if anchored[node_id]:
            _place_run(graph, modules, containers, prev, run, node_id)
            prev, run = node_id, []
        elif modules[node_id] is None:
            run.append(node_id)
    # After the last anchor: the loss and other top-level code.
    for node_id in run:
        modules[node_id] = _NO_MODULE


def _place_run(
    graph: Graph,
    modules: list[tuple[str, ...] | None],
    containers: set[tuple[str, ...]],
    prev: int | None,
    run: list[int],
    nxt: int,
) -> None:
    if not run:
        return
    after = modules[nxt] or _NO_MODULE
    before = _NO_MODULE if prev is None else modules[prev] or _NO_MODULE
    common = _common(before, after) if prev is not None else _NO_MODULE
    # Ops around a leaf module (bn2, linear1) belong to the container that holds it; a
    # container with parameters of its own (attention's in_proj) may hold them itself.
    closing = _deeper(common, before if before in containers else before[:-1])
    opening = _deeper(common, after if after in containers else after[:-1])
    # run[:split] closes the earlier block: everything up to the last fan-out (a residual
    # block's output feeds the next block twice), and the rest opens the next block.
    split: int | None = 0 if prev is not None and _fans_out(graph, prev) else None
    for index, node_id in enumerate(run):
        if _fans_out(graph, node_id):
            split = index + 1
    if split is not None:
        for index, node_id in enumerate(run):
            modules[node_id] = closing if index < split else opening
        return
    # Nothing fans out: the run finishes the earlier module (an activation after a block,
    # attention's output reshape), except ops that also read something from outside it,
    # like a post-norm residual add; those go one level up, to the enclosing module.
    outer = _deeper(common, closing[:-1])
    for node_id in run:
        inside = all(
            (module := modules[edge.dst]) is None or module[: len(closing)] == closing
            for edge in graph.children(node_id)
            if graph.nodes[edge.dst].leaf is None
        )
        modules[node_id] = closing if inside else outer


def _fans_out(graph: Graph, node_id: int) -> bool:
    first: int | None = None
    for edge in graph.parents(node_id):
        if first is None:
            first = edge.src
        elif edge.src != first:
            return True
    return False


def _place_rest(graph: Graph, modules: list[tuple[str, ...] | None]) -> None:
    """Nodes without a sequence number, and leaves that are not parameters."""
    for node in graph.nodes:
        if modules[node.id] is not None:
            continue
        if node.leaf is not None and node.leaf.kind == "input":
            modules[node.id] = _NO_MODULE
            continue
        found: tuple[str, ...] | None = None
        for edge in graph.parents(node.id):
            module = modules[edge.src]
            if module is not None:
                found = module if found is None else _common(found, module)
        modules[node.id] = found if found is not None else _NO_MODULE


# -- the view ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Box:
    """Graph nodes drawn as one box: a whole module, or a run of repeated blocks.

    For a repeat, ``first`` … ``last`` are the hidden blocks and ``like`` the block drawn
    in full that they all match; ``count`` is how many blocks the box stands for.
    """

    key: str
    kind: Literal["module", "repeat"]
    first: str
    last: str
    like: str | None
    count: int
    nodes: int
    params: int


@dataclass(frozen=True)
class Cluster:
    """A container module: the nodes and boxes drawn directly in it, then sub-clusters."""

    module: str
    nodes: tuple[int, ...]
    boxes: tuple[Box, ...]
    children: tuple[Cluster, ...]


@dataclass(frozen=True)
class ViewEdge:
    """A drawn edge, in autograd's direction (``src`` lists ``dst`` in next_functions).

    ``count`` is how many graph edges it stands for (more than one between boxes).
    """

    src: str
    dst: str
    count: int


@dataclass(frozen=True)
class View:
    """What to draw: a tree of clusters (``top`` is the graph itself) and the edges.

    ``keys`` maps every graph node id to the key it is drawn under (its own ``n<id>``, or
    the box hiding it). ``modules`` is the inferred module per node (None without names).
    ``hidden`` counts the graph nodes inside boxes; ``items`` the nodes and boxes drawn.
    """

    detail: Literal["full", "collapsed"]
    top: Cluster
    edges: tuple[ViewEdge, ...]
    keys: tuple[str, ...]
    modules: tuple[str, ...] | None
    hidden: int
    items: int


def build_view(graph: Graph, detail: Detail = "auto", *, budget: int = COLLAPSED_BUDGET) -> View:
    """Plan the picture of ``graph``: which clusters, which nodes, which boxes, which edges.

    ``detail="auto"`` is ``"full"`` for graphs up to :data:`AUTO_FULL_MAX` nodes and
    ``"collapsed"`` above. A graph without parameter names has no modules, so its
    collapsed view is its full view.
    """
    modules = infer_modules(graph)
    resolved: Literal["full", "collapsed"]
    if detail == "auto":
        resolved = "full" if len(graph.nodes) <= AUTO_FULL_MAX else "collapsed"
    else:
        resolved = detail
    tree = _ModuleTree(graph, modules)
    if resolved == "collapsed" and modules is not None:
        tree.collapse_repeats()
        tree.collapse_until(budget)
    return tree.view(resolved, modules)


def _index(name: str) -> int | None:
    return int(name) if name.isdigit() else None


class _ModuleTree:
    """Container modules, the nodes drawn in each, and the boxes that replace some."""

    def __init__(self, graph: Graph, modules: tuple[str, ...] | None) -> None:
        self.graph = graph
        self.order = _forward_order(graph)
        self.rank = {node_id: i for i, node_id in enumerate(self.order)}
        self.paths = [_parts(m) for m in (modules or ("",) * len(graph.nodes))]
        prefixes = {p[:i] for p in set(self.paths) for i in range(1, len(p) + 1)}
        # A container has sub-modules of its own; a leaf module (conv1, bn2) is drawn
        # inside its container, its name in the node's label.
        self.containers = {p[:-1] for p in prefixes if len(p) > 1}
        self.home = [self._container_of(p) for p in self.paths]
        self.direct: dict[tuple[str, ...], list[int]] = {}
        for node_id in self.order:
            self.direct.setdefault(self.home[node_id], []).append(node_id)
        kids: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
        for path in self.containers:
            kids.setdefault(path[:-1], []).append(path)
        self._members: dict[tuple[str, ...], list[int]] = {}
        for node_id in self.order:  # forward order, so every list is too
            home = self.home[node_id]
            for depth in range(len(home) + 1):
                self._members.setdefault(home[:depth], []).append(node_id)
        self.kids = {
            path: tuple(sorted(children, key=self._first_position))
            for path, children in kids.items()
        }
        self._signatures: dict[tuple[str, ...], tuple[object, ...]] = {}
        self.boxes: dict[tuple[str, ...], Box] = {}  # first module of a box -> the box
        self.boxed: dict[tuple[str, ...], tuple[str, ...]] = {}  # module -> its box's first

    def _container_of(self, path: tuple[str, ...]) -> tuple[str, ...]:
        while path and path not in self.containers:
            path = path[:-1]
        return path

    # -- structure ----------------------------------------------------------------------------

    def children_of(self, path: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
        return self.kids.get(path, ())

    def _first_position(self, path: tuple[str, ...]) -> tuple[int, int, str]:
        ids = self.members(path)
        index = _index(path[-1])
        return (
            self.rank[ids[0]] if ids else len(self.order),
            index if index is not None else -1,
            path[-1],
        )

    def members(self, path: tuple[str, ...]) -> list[int]:
        """Every node drawn in ``path`` or in a container below it, in forward order."""
        return self._members.get(path, [])

    def signature(self, path: tuple[str, ...]) -> tuple[object, ...]:
        """A block's structure, comparable across sibling blocks: ops, params, edges."""
        cached = self._signatures.get(path)
        if cached is not None:
            return cached
        ids = self.members(path)
        local = {node_id: i for i, node_id in enumerate(ids)}
        depth = len(path)
        graph = self.graph
        parts: list[object] = []
        for node_id in ids:
            node = graph.nodes[node_id]
            leaf = node.leaf
            where = _parts(leaf.name)[depth:] if leaf is not None and leaf.name else None
            parts.append(
                (
                    node.name,
                    self.paths[node_id][depth:],
                    where,
                    leaf.shape if leaf is not None else None,
                    tuple((s.slot, s.shape, s.dtype) for s in node.saved),
                    tuple(
                        (local[e.dst], e.slot) for e in graph.children(node_id) if e.dst in local
                    ),
                )
            )
        signature = self._signatures[path] = tuple(parts)
        return signature

    # -- collapsing ---------------------------------------------------------------------------

    def collapse_repeats(self, path: tuple[str, ...] = _NO_MODULE) -> None:
        """Box every run of identical consecutive numbered blocks but its first."""
        kids = self.children_of(path)
        numbered = sorted((c for c in kids if _index(c[-1]) is not None), key=lambda c: int(c[-1]))
        start = 0
        while start < len(numbered):
            sig = self.signature(numbered[start])
            end = start + 1
            while (
                end < len(numbered)
                and int(numbered[end][-1]) == int(numbered[end - 1][-1]) + 1
                and self.signature(numbered[end]) == sig
            ):
                end += 1
            if end - start >= 2:
                self._box(numbered[start + 1 : end], like=numbered[start])
            start = end
        for child in kids:
            if child not in self.boxed:
                self.collapse_repeats(child)

    def collapse_until(self, budget: int) -> None:
        """Box whole modules, deepest level first, until at most ``budget`` items show."""
        while self.count_items() > budget:
            open_ = [c for c in self._open_containers() if len(self.members(c)) > 1]
            if not open_:
                return
            deepest = max(len(c) for c in open_)
            for path in sorted(c for c in open_ if len(c) == deepest):
                self._box([path], like=None)

    def _open_containers(self) -> list[tuple[str, ...]]:
        out: list[tuple[str, ...]] = []
        stack = list(self.children_of(_NO_MODULE))
        while stack:
            path = stack.pop()
            if path in self.boxed:
                continue
            out.append(path)
            stack.extend(self.children_of(path))
        return out

    def _box(self, paths: list[tuple[str, ...]], like: tuple[str, ...] | None) -> None:
        first, last = paths[0], paths[-1]
        hidden = [n for p in paths for n in self.members(p)]
        params = sum(
            1
            for n in hidden
            if (leaf := self.graph.nodes[n].leaf) is not None and leaf.kind == "parameter"
        )
        box = Box(
            key="",  # numbered once the view is built, in drawing order
            kind="repeat" if like is not None else "module",
            first=_join(first),
            last=_join(last),
            like=_join(like) if like is not None else None,
            count=len(paths),
            nodes=len(hidden) // len(paths),
            params=params // len(paths),
        )
        self.boxes[first] = box
        for path in paths:
            self.boxed[path] = first

    def count_items(self) -> int:
        shown = 0
        stack: list[tuple[str, ...]] = [_NO_MODULE]
        while stack:
            path = stack.pop()
            shown += len(self.direct.get(path, ()))
            for child in self.children_of(path):
                if child in self.boxes:
                    shown += 1
                elif child not in self.boxed:
                    stack.append(child)
        return shown

    # -- output -------------------------------------------------------------------------------

    def view(self, detail: Literal["full", "collapsed"], modules: tuple[str, ...] | None) -> View:
        keys = [node_key(node.id) for node in self.graph.nodes]
        numbering: list[Box] = []
        top = self._cluster(_NO_MODULE, keys, numbering)
        edges: dict[tuple[str, str], int] = {}
        for edge in self.graph.edges:
            src, dst = keys[edge.src], keys[edge.dst]
            if src != dst:
                edges[(src, dst)] = edges.get((src, dst), 0) + 1
        hidden = sum(1 for node in self.graph.nodes if keys[node.id] != node_key(node.id))
        return View(
            detail=detail,
            top=top,
            edges=tuple(ViewEdge(src, dst, count) for (src, dst), count in edges.items()),
            keys=tuple(keys),
            modules=modules,
            hidden=hidden,
            items=len(self.graph.nodes) - hidden + len(numbering),
        )

    def _cluster(self, path: tuple[str, ...], keys: list[str], numbering: list[Box]) -> Cluster:
        boxes: list[Box] = []
        children: list[Cluster] = []
        for child in self.children_of(path):
            box = self.boxes.get(child)
            if box is not None:
                keyed = dataclasses.replace(box, key=f"b{len(numbering)}")
                numbering.append(keyed)
                boxes.append(keyed)
                span = [p for p, first in self.boxed.items() if first == child]
                for member in (n for p in span for n in self.members(p)):
                    keys[member] = keyed.key
            elif child not in self.boxed:
                children.append(self._cluster(child, keys, numbering))
        return Cluster(
            module=_join(path),
            nodes=tuple(self.direct.get(path, ())),
            boxes=tuple(boxes),
            children=tuple(children),
        )


def _forward_order(graph: Graph) -> list[int]:
    """Node ids in forward order: ops by sequence number, each leaf just before its user."""
    ops = sorted(
        (node.sequence_nr, node.id)
        for node in graph.nodes
        if node.sequence_nr is not None and node.leaf is None
    )
    placed = [False] * len(graph.nodes)
    order: list[int] = []

    def place(ids: Iterable[int]) -> None:
        for node_id in ids:
            if placed[node_id]:
                continue
            placed[node_id] = True
            # Unnumbered inputs (leaves) go right before the first op that reads them.
            for edge in graph.children(node_id):
                if graph.nodes[edge.dst].sequence_nr is None and not placed[edge.dst]:
                    placed[edge.dst] = True
                    order.append(edge.dst)
            order.append(node_id)

    place(node_id for _, node_id in ops)
    place(range(len(graph.nodes)))
    return order
