"""The autograd graph as plain, immutable data.

A :class:`Graph` is what :func:`gradprobe.trace` returns: nodes (one per autograd
``Node``), edges (the ``next_functions`` links, with their slot numbers), leaves
(``AccumulateGrad`` nodes and the tensor they accumulate into) and the tensors each node
saved for backward. It holds no torch object at all, only names, shapes, dtypes and
versions, so keeping a Graph never keeps a tensor (or its memory) alive.

Direction: an :class:`Edge` points the way gradients flow, from a node to one of its
``next_functions``. Renderers draw it the other way round (forward data flow) when that
reads better; the data keeps autograd's direction.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, fields
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

__all__ = [
    "CutMark",
    "Edge",
    "Graph",
    "GraphSlice",
    "Leaf",
    "Mark",
    "MarkKind",
    "MissingLeaf",
    "Node",
    "NodeKind",
    "Root",
    "SavedTensor",
    "TensorKind",
    "Truncation",
]

NodeKind = Literal["op", "accumulate_grad", "custom_function", "checkpoint", "compiled"]
"""What a node is: a built-in backward formula (``op``), the ``AccumulateGrad`` that writes
a leaf's ``.grad``, a user ``autograd.Function``, a reentrant ``torch.utils.checkpoint``
block (opaque: its inner nodes only exist during backward), or a ``torch.compile`` region."""

TensorKind = Literal["parameter", "buffer", "input", "tensor"]
"""Where a named tensor came from: ``model.named_parameters()``, ``model.named_buffers()``,
the ``names`` mapping given to :func:`gradprobe.trace`, or nowhere (unnamed)."""


MarkKind = Literal["stale", "nonfinite", "cut", "problem"]
"""Why a finding's picture highlights a node: it holds a ``stale`` saved tensor, made the
first NaN/Inf (``nonfinite``), received a value whose graph was ``cut``, or is otherwise
the ``problem`` the finding is about."""


class FrozenMap(Mapping[str, str]):
    """A read-only, hashable, picklable ``str -> str`` mapping (node metadata)."""

    __slots__ = ("_items",)
    _items: dict[str, str]

    def __init__(self, items: Mapping[str, str] | None = None) -> None:
        object.__setattr__(self, "_items", dict(items or {}))

    def __getitem__(self, key: str) -> str:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._items.items())))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and dict(self._items) == dict(other)

    def __repr__(self) -> str:
        return f"FrozenMap({self._items!r})"

    def __reduce__(self) -> tuple[type[FrozenMap], tuple[dict[str, str]]]:
        return (FrozenMap, (dict(self._items),))

    def __setattr__(self, name: str, value: object) -> None:
        msg = "FrozenMap is read-only"
        raise AttributeError(msg)


_NO_METADATA = FrozenMap()


@dataclass(frozen=True)
class Leaf:
    """A tensor that autograd accumulates a gradient into (the target of ``AccumulateGrad``).

    ``has_grad`` is whether ``.grad`` was set when the graph was traced.
    """

    name: str | None
    kind: TensorKind
    shape: tuple[int, ...]
    dtype: str
    device: str
    requires_grad: bool
    is_leaf: bool
    retains_grad: bool
    has_grad: bool


@dataclass(frozen=True)
class SavedTensor:
    """A tensor a node saved for its backward formula.

    ``slot`` is the name of the saved argument in PyTorch's derivative formula (``self``,
    ``other``, ``result``, ``mat1``, ...; ``saved_tensors[i]`` for a custom Function).
    ``version_now`` is the tensor's ``_version`` when the graph was traced (``None`` when
    the tensor has no version counter, e.g. an inference tensor, or was packed). ``version_saved`` is the
    version at save time: PyTorch keeps no such field, so only :func:`gradprobe.trace` run
    inside ``gradprobe.record()`` (which noted it when the node was made) fills it in;
    otherwise it is ``None``.
    """

    slot: str
    shape: tuple[int, ...]
    dtype: str
    device: str
    version_now: int | None
    version_saved: int | None = None
    name: str | None = None
    is_output: bool = False
    packed: str | None = None
    """Set when ``saved_tensors_hooks`` replaced the tensor (``save_on_cpu``, non-reentrant
    checkpoint): the type the pack hook returned. Shape and dtype are then those of a
    tensor found inside it, or unknown (``()`` and ``"unknown"``)."""

    @property
    def stale(self) -> bool | None:
        """True if the tensor was written in place after it was saved; None if unknown."""
        if self.version_saved is None or self.version_now is None:
            return None
        return self.version_now != self.version_saved


@dataclass(frozen=True)
class Node:
    """One autograd node (a ``grad_fn``).

    ``id`` is the node's position in the deterministic traversal order, stable across runs
    of the same program. ``freed`` is True when backward already released the node's saved
    tensors (the graph was not retained).
    """

    id: int
    name: str
    kind: NodeKind
    sequence_nr: int | None = None
    saved: tuple[SavedTensor, ...] = ()
    leaf: Leaf | None = None
    freed: bool = False
    metadata: Mapping[str, str] = _NO_METADATA

    @property
    def label(self) -> str:
        """A short display name: ``Mul`` for ``MulBackward0``, the leaf name for a leaf."""
        if self.leaf is not None:
            return self.leaf.name or "AccumulateGrad"
        name = self.name
        if name.endswith(("Backward0", "Backward1")):
            return name[: -len("Backward0")]
        if name.endswith("Backward"):
            return name[: -len("Backward")]
        return name


class Edge(NamedTuple):
    """``next_functions[slot]`` of node ``src`` is ``(node dst, input_nr)``.

    ``slot`` is the index of the forward input this gradient belongs to; ``input_nr`` is
    which output of ``dst``'s forward op fed it. (A named tuple rather than a dataclass:
    graphs have as many edges as nodes, and tuples are cheaper to build and store.)
    """

    src: int
    dst: int
    slot: int
    input_nr: int


@dataclass(frozen=True)
class Root:
    """A tensor passed to :func:`gradprobe.trace`, and where it enters the graph.

    ``node`` is the id of its ``grad_fn``, or None when it has none (a leaf, a tensor that
    does not require grad, a result computed under ``no_grad``); ``note`` then says why.
    """

    name: str
    shape: tuple[int, ...]
    dtype: str
    device: str
    requires_grad: bool
    is_leaf: bool
    node: int | None
    note: str | None = None


@dataclass(frozen=True)
class Truncation:
    """The walk stopped at ``max_nodes``; ``unexplored`` nodes were seen but not expanded."""

    max_nodes: int
    unexplored: int


@dataclass(frozen=True)
class Graph:
    """An autograd graph, traced from one or more tensors.

    Nodes are stored in traversal order, so ``graph.nodes[i].id == i``.

    Example:
        >>> import torch, gradprobe
        >>> w = torch.ones(3, requires_grad=True)
        >>> graph = gradprobe.trace((w * 2).sum(), names={"w": w})
        >>> [node.name for node in graph.nodes]
        ['SumBackward0', 'MulBackward0', 'torch::autograd::AccumulateGrad']
        >>> graph.leaves[0].name
        'w'
    """

    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    roots: tuple[Root, ...]
    truncated: Truncation | None = None
    notes: tuple[str, ...] = ()
    model: str | None = None
    """The class name of the ``model=`` given to :func:`gradprobe.trace`; None when none was,
    and then the leaves that are parameters carry no names."""
    module_types: Mapping[str, str] = _NO_METADATA
    """The class name of every sub-module of ``model=`` by its dotted path
    (``{"layer1.0": "Bottleneck", ...}``); empty without ``model=``. Pictures label
    module boxes with it."""

    # -- navigation -------------------------------------------------------------------------

    @cached_property
    def _children(self) -> tuple[tuple[Edge, ...], ...]:
        out: list[list[Edge]] = [[] for _ in self.nodes]
        for edge in self.edges:
            out[edge.src].append(edge)
        return tuple(tuple(edges) for edges in out)

    @cached_property
    def _parents(self) -> tuple[tuple[Edge, ...], ...]:
        out: list[list[Edge]] = [[] for _ in self.nodes]
        for edge in self.edges:
            out[edge.dst].append(edge)
        return tuple(tuple(edges) for edges in out)

    def node(self, node_id: int) -> Node:
        """The node with this id."""
        return self.nodes[node_id]

    def children(self, node_id: int) -> tuple[Edge, ...]:
        """Edges from ``node_id`` to its next functions, in slot order."""
        return self._children[node_id]

    def parents(self, node_id: int) -> tuple[Edge, ...]:
        """Edges into ``node_id`` from the nodes that list it among their next functions."""
        return self._parents[node_id]

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    # -- summaries ---------------------------------------------------------------------------

    @cached_property
    def depth(self) -> int:
        """Nodes on the longest path from a root to a node without next functions."""
        indegree = [0] * len(self.nodes)
        for edge in self.edges:
            indegree[edge.dst] += 1
        level = [1] * len(self.nodes)
        ready = [i for i, count in enumerate(indegree) if not count]
        children = self._children
        while ready:
            node = ready.pop()
            for edge in children[node]:
                if level[node] + 1 > level[edge.dst]:
                    level[edge.dst] = level[node] + 1
                indegree[edge.dst] -= 1
                if not indegree[edge.dst]:
                    ready.append(edge.dst)
        return max(level, default=0)

    @property
    def leaves(self) -> tuple[Leaf, ...]:
        """Every ``AccumulateGrad`` target, in traversal order."""
        return tuple(node.leaf for node in self.nodes if node.leaf is not None)

    @property
    def parameters(self) -> tuple[Leaf, ...]:
        """Leaves that are parameters of the model given to :func:`gradprobe.trace`."""
        return tuple(leaf for leaf in self.leaves if leaf.kind == "parameter")

    @property
    def freed(self) -> bool:
        """True if any node's saved tensors were already released by a backward pass."""
        return any(node.freed for node in self.nodes)

    @property
    def saved_count(self) -> int:
        """How many saved tensors the graph holds, over all nodes."""
        return sum(len(node.saved) for node in self.nodes)

    def find(self, name: str) -> tuple[Node, ...]:
        """Nodes whose ``name`` is ``name`` (``MulBackward0``) or whose leaf is named ``name``."""
        return tuple(
            node
            for node in self.nodes
            if node.name == name or (node.leaf is not None and node.leaf.name == name)
        )

    def to_dict(self) -> dict[str, Any]:
        """The graph as JSON-ready builtins (lists, dicts, strings, numbers)."""
        nodes = []
        for node in self.nodes:
            item = {f.name: getattr(node, f.name) for f in fields(node)}
            item["saved"] = [asdict(saved) for saved in node.saved]
            item["leaf"] = asdict(node.leaf) if node.leaf is not None else None
            item["metadata"] = dict(node.metadata)
            nodes.append(item)
        return {
            "nodes": nodes,
            "edges": [edge._asdict() for edge in self.edges],
            "roots": [asdict(root) for root in self.roots],
            "truncated": asdict(self.truncated) if self.truncated is not None else None,
            "notes": list(self.notes),
            "model": self.model,
            "module_types": dict(self.module_types),
            "depth": self.depth,
        }

    # -- display -----------------------------------------------------------------------------

    def __repr__(self) -> str:
        parts = [f"{len(self.nodes)} nodes", f"{len(self.parameters)} params"]
        if self.saved_count:
            parts.append(f"{self.saved_count} saved tensors")
        if self.freed:
            parts.append("freed by backward")
        if self.truncated is not None:
            parts.append(f"truncated at {self.truncated.max_nodes}")
        return f"<Graph {', '.join(parts)}>"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from gradprobe.render.text import graph_summary

        yield graph_summary(self)

    def _repr_svg_(self) -> str:
        from gradprobe.render.svg import to_svg

        return to_svg(self)

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, str]:
        """Jupyter: the interactive viewer (``gradprobe.save_html``) where the front-end
        runs JavaScript, the SVG picture inside it and beside it where it does not."""
        from gradprobe.render.html import notebook_bundle

        return notebook_bundle(self)

    def _repr_html_(self) -> str:
        """The ``text/html`` of :meth:`_repr_mimebundle_`."""
        return self._repr_mimebundle_()["text/html"]


def malformed(graph: Graph) -> str | None:
    """What is wrong with a hand-built ``graph``, or None when views can walk it: nodes
    that are :class:`Node` s with ``nodes[i].id == i``, :class:`Edge` s and roots that name
    existing nodes. :func:`gradprobe.trace` always builds well-formed graphs.

    Example:
        >>> graph = Graph(nodes=(Node(id=1, name="MulBackward0", kind="op"),), edges=(),
        ...               roots=())
        >>> malformed(graph)
        'nodes[0] has id 1; node ids must be their positions (nodes[i].id == i)'
    """
    # Typed as a Graph, built by hand from anything: look at what is really there.
    nodes: Any = graph.nodes
    edges: Any = graph.edges
    roots: Any = graph.roots
    parts = (("nodes", nodes), ("edges", edges), ("roots", roots))
    for field_name, value in parts:
        if not isinstance(value, (tuple, list)):
            return f"{field_name} is {type(value).__name__}, not a tuple"
    count = len(nodes)
    for index, node in enumerate(nodes):
        if not isinstance(node, Node):
            return f"nodes[{index}] is a {type(node).__name__}, not a Node"
        if node.id != index:
            return (
                f"nodes[{index}] has id {node.id!r}; node ids must be their positions "
                "(nodes[i].id == i)"
            )
    for index, edge in enumerate(edges):
        if not isinstance(edge, Edge):
            return f"edges[{index}] is {edge!r}, not an Edge(src, dst, slot, input_nr)"
        for end in (edge.src, edge.dst):
            if not isinstance(end, int) or not 0 <= end < count:
                return (
                    f"edges[{index}] = {edge!r} names node {end!r}, but the graph has {count} nodes"
                )
    for index, root in enumerate(roots):
        if not isinstance(root, Root):
            return f"roots[{index}] is a {type(root).__name__}, not a Root"
        if root.node is not None and not (isinstance(root.node, int) and 0 <= root.node < count):
            return (
                f"roots[{index}] ({root.name!r}) enters at node {root.node!r}, but the graph "
                f"has {count} nodes"
            )
    return None


# -- the part of a graph a finding is about -----------------------------------------------------


@dataclass(frozen=True)
class Mark:
    """A node of a :class:`GraphSlice` that its finding is about, and why (``text``)."""

    node: int
    kind: MarkKind
    text: str


@dataclass(frozen=True)
class CutMark:
    """Where a graph was cut: ``op`` at ``where`` (``"train.py:59: p = x.argmax(1)"``)
    took the value of node ``source`` and made one without gradient that fed ``node``
    (either None when not known)."""

    op: str
    where: str
    node: int | None = None
    source: int | None = None


@dataclass(frozen=True)
class MissingLeaf:
    """A parameter that got no gradient, and why; ``cut`` indexes the :class:`CutMark`
    that separated it from the loss, when known."""

    name: str
    reason: str
    cut: int | None = None


@dataclass(frozen=True)
class GraphSlice:
    """The few nodes of a backward graph around a problem, as plain data, with the
    culprits marked: what a finding's picture draws (``finding.to_svg()``).

    ``graph`` holds only the nodes near the problem (its edges stay inside it);
    ``marks`` point at its culprit nodes, ``cuts`` are where the graph was cut, and
    ``missing`` lists parameters that got no gradient (absent from any graph).
    """

    graph: Graph
    marks: tuple[Mark, ...] = ()
    cuts: tuple[CutMark, ...] = ()
    missing: tuple[MissingLeaf, ...] = ()
