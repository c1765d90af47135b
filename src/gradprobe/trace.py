"""Walk ``grad_fn`` / ``next_functions`` into a :class:`~gradprobe.graph.Graph`.

The walk is a breadth-first search with an explicit queue (never recursion), visiting
``next_functions`` in slot order from the roots in the order given, so the same program
gives the same node ids every run. It copies out names, shapes, dtypes and versions and
keeps no torch object; see ``_deepfree`` for why deep graphs are then held briefly.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

import torch

from gradprobe import _deepfree
from gradprobe.errors import GradprobeTypeError, GradprobeValueError, describe
from gradprobe.graph import (
    Edge,
    Graph,
    Leaf,
    Node,
    NodeKind,
    Root,
    SavedTensor,
    TensorKind,
    Truncation,
)

__all__ = ["trace"]

_ACCUMULATE_GRAD = "torch::autograd::AccumulateGrad"
_NO_SEQUENCE = 2**64 - 1  # AccumulateGrad's _sequence_nr() (UINT64_MAX)
_OPAQUE_KINDS: dict[str, NodeKind] = {
    "CheckpointFunctionBackward": "checkpoint",
    "CompiledFunctionBackward": "compiled",
}
_FREED_NOTE = (
    "the graph was already freed by backward(): its saved tensors are released, so a second "
    "backward() through it fails. Pass retain_graph=True to the first backward() if you "
    "need it twice."
)

# Per node class: names of its `_raw_saved_*` attributes (None for custom Functions, which
# keep theirs in `_raw_saved_tensors`). dir() is slow, and the set is fixed per class.
_saved_slots: dict[type, tuple[str, ...] | None] = {}
_dtype_names: dict[torch.dtype, str] = {}


def trace(
    *tensors: torch.Tensor | Iterable[torch.Tensor],
    model: torch.nn.Module | None = None,
    names: Mapping[str, torch.Tensor] | None = None,
    max_nodes: int | None = None,
) -> Graph:
    """Trace the autograd graph behind ``tensors`` into a plain :class:`Graph`.

    Args:
        tensors: the outputs to start from (usually the loss). Lists and tuples of
            tensors are flattened, so ``trace(model(x))`` works for tuple outputs.
        model: names parameters and buffers after ``model.named_parameters()`` and
            ``model.named_buffers()``.
        names: more names, ``{"x": x}``, for inputs and other tensors.
        max_nodes: stop after this many nodes; the cut is recorded in ``graph.truncated``.

    Returns:
        The graph. It holds no reference to any tensor.

    Raises:
        GradprobeTypeError: a non-tensor to trace, a ``model`` that is not an
            ``nn.Module``, or ``names`` that is not a mapping of tensors.
        GradprobeValueError: no tensors, or ``max_nodes`` below 1.

    Example:
        >>> import torch, gradprobe
        >>> layer = torch.nn.Linear(3, 2)
        >>> graph = gradprobe.trace(layer(torch.ones(1, 3)).sum(), model=layer)
        >>> sorted(leaf.name for leaf in graph.parameters)
        ['bias', 'weight']
    """
    roots = _flatten(tensors)
    table = _name_table(model, names)
    limit = _check_max_nodes(max_nodes)
    return _Walk(table, limit).run(roots)


# -- argument checking ------------------------------------------------------------------------


def _flatten(tensors: tuple[Any, ...]) -> list[torch.Tensor]:
    if not tensors:
        msg = (
            "trace() needs at least one tensor to start from, e.g. trace(loss) or "
            "trace(*outputs); it was called with none."
        )
        raise GradprobeValueError(msg)
    out: list[torch.Tensor] = []
    stack: list[Any] = list(reversed(tensors))
    while stack:
        item = stack.pop()
        if isinstance(item, torch.Tensor):
            out.append(item)
        elif isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        else:
            msg = (
                f"trace() can only follow tensors, but got {describe(item)}. "
                "Pass the tensor whose graph you want (usually the loss), e.g. trace(loss); "
                "for a model's output dict use trace(*out.values())."
            )
            raise GradprobeTypeError(msg)
    if not out:
        msg = "trace() was given only empty lists or tuples; pass at least one tensor."
        raise GradprobeValueError(msg)
    return out


def _name_table(
    model: object, names: object
) -> dict[int, tuple[str, TensorKind]]:
    table: dict[int, tuple[str, TensorKind]] = {}
    if model is not None:
        if not isinstance(model, torch.nn.Module):
            msg = (
                f"trace(model=...) expects a torch.nn.Module, got {describe(model)}. "
                "Pass the module whose parameters you want named, or use names={'w': w} "
                "for loose tensors."
            )
            raise GradprobeTypeError(msg)
        for name, buffer in model.named_buffers(remove_duplicate=False):
            table.setdefault(id(buffer), (name, "buffer"))
        for name, param in model.named_parameters(remove_duplicate=False):
            table.setdefault(id(param), (name, "parameter"))
    if names is not None:
        if not isinstance(names, Mapping):
            msg = (
                f"trace(names=...) expects a mapping from name to tensor, got {describe(names)}. "
                "Example: trace(loss, names={'x': x, 'target': y})."
            )
            raise GradprobeTypeError(msg)
        for name, tensor in names.items():
            if not isinstance(tensor, torch.Tensor):
                msg = (
                    f"trace(names=...) maps {name!r} to {describe(tensor)}, not a tensor. "
                    "Every value of names must be a torch.Tensor."
                )
                raise GradprobeTypeError(msg)
            table[id(tensor)] = (str(name), table.get(id(tensor), ("", "input"))[1])
    return table


def _check_max_nodes(max_nodes: object) -> int | None:
    if max_nodes is None:
        return None
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int):
        msg = f"trace(max_nodes=...) must be a positive int or None, got {describe(max_nodes)}."
        raise GradprobeTypeError(msg)
    if max_nodes < 1:
        msg = (
            f"trace(max_nodes={max_nodes}) would trace nothing: max_nodes must be at least 1. "
            "Use None (the default) to trace the whole graph."
        )
        raise GradprobeValueError(msg)
    return max_nodes


# -- tensor metadata ---------------------------------------------------------------------------


def _dtype_name(dtype: torch.dtype) -> str:
    name = _dtype_names.get(dtype)
    if name is None:
        name = _dtype_names[dtype] = str(dtype).removeprefix("torch.")
    return name


def _version(tensor: torch.Tensor) -> int | None:
    try:
        return int(tensor._version)
    except RuntimeError:  # inference tensors have no version counter
        return None


def _slots_of(fn: Any) -> tuple[str, ...] | None:
    cls = type(fn)
    try:
        return _saved_slots[cls]
    except KeyError:
        pass
    if isinstance(fn, torch.autograd.function.BackwardCFunction):
        slots = None
    else:
        slots = tuple(sorted(a for a in dir(fn) if a.startswith("_raw_saved_")))
    _saved_slots[cls] = slots
    return slots


class _Walk:
    """One traversal; holds the torch objects only for the duration of :meth:`run`."""

    def __init__(self, table: dict[int, tuple[str, TensorKind]], limit: int | None) -> None:
        self.table = table
        self.limit = limit

    # Saved tensors of one node, and whether backward already freed them.
    def saved(self, fn: Any) -> tuple[tuple[SavedTensor, ...], bool]:
        slots = _slots_of(fn)
        pairs: list[tuple[str, Any]]
        if slots is None:
            try:
                raws = fn._raw_saved_tensors
            except RuntimeError:  # custom Function whose graph was freed
                return (), True
            pairs = [(f"saved_tensors[{i}]", raw) for i, raw in enumerate(raws)]
        else:
            pairs = [(slot[11:], getattr(fn, slot)) for slot in slots]
        out: list[SavedTensor] = []
        missing = 0
        table = self.table
        for slot, raw in pairs:
            tensor = raw.data if raw is not None else None
            if tensor is None:
                missing += 1
                continue
            named = table.get(id(tensor))
            out.append(
                SavedTensor(
                    slot=slot,
                    shape=tuple(tensor.shape),
                    dtype=_dtype_name(tensor.dtype),
                    device=str(tensor.device),
                    version_now=_version(tensor),
                    name=named[0] if named else None,
                    is_output=slot.startswith("result"),
                )
            )
        # An unneeded slot also reads as None (x * 2.0 saves no `self`), so a node counts
        # as freed only when every slot it has is empty.
        freed = slots is not None and bool(pairs) and missing == len(pairs)
        return tuple(out), freed

    def leaf(self, fn: Any) -> Leaf:
        variable = fn.variable
        named = self.table.get(id(variable))
        return Leaf(
            name=named[0] if named else None,
            kind=named[1] if named else "tensor",
            shape=tuple(variable.shape),
            dtype=_dtype_name(variable.dtype),
            device=str(variable.device),
            requires_grad=bool(variable.requires_grad),
            is_leaf=bool(variable.is_leaf),
            retains_grad=bool(variable.retains_grad),
            has_grad=variable.grad is not None,
        )

    def node(self, node_id: int, fn: Any) -> Node:
        name = fn.name()
        if name == _ACCUMULATE_GRAD:
            return Node(id=node_id, name=name, kind="accumulate_grad", leaf=self.leaf(fn))
        saved, freed = self.saved(fn)
        metadata: Mapping[str, str] = MappingProxyType({})
        kind: NodeKind = "op"
        if isinstance(fn, torch.autograd.function.BackwardCFunction):
            forward = fn._forward_cls
            kind = _OPAQUE_KINDS.get(name, "custom_function")
            metadata = MappingProxyType(
                {"forward": f"{forward.__module__}.{forward.__qualname__}"}
            )
        sequence_nr = fn._sequence_nr()
        return Node(
            id=node_id,
            name=name,
            kind=kind,
            sequence_nr=None if sequence_nr == _NO_SEQUENCE else int(sequence_nr),
            saved=saved,
            freed=freed,
            metadata=metadata,
        )

    def root(self, index: int, tensor: torch.Tensor, node_id: int | None, count: int) -> Root:
        named = self.table.get(id(tensor))
        name = named[0] if named else ("output" if count == 1 else f"output[{index}]")
        note = None
        if node_id is None:
            note = (
                f"{name} does not require grad, so it has no autograd graph: it was computed "
                "under torch.no_grad()/inference_mode, from detached tensors, or only from "
                "tensors that do not require grad."
            )
        elif tensor.grad_fn is None:
            note = f"{name} is a leaf: it has no grad_fn, its gradient accumulates in .grad."
        return Root(
            name=name,
            shape=tuple(tensor.shape),
            dtype=_dtype_name(tensor.dtype),
            device=str(tensor.device),
            requires_grad=bool(tensor.requires_grad),
            is_leaf=bool(tensor.is_leaf),
            node=node_id,
            note=note,
        )

    def run(self, tensors: list[torch.Tensor]) -> Graph:
        seen: dict[Any, int] = {}
        fns: list[Any] = []
        queue: deque[Any] = deque()
        limit = self.limit
        dropped: set[Any] = set()

        def discover(fn: Any) -> int | None:
            node_id = seen.get(fn)
            if node_id is not None:
                return node_id
            if limit is not None and len(fns) >= limit:
                dropped.add(fn)
                return None
            node_id = seen[fn] = len(fns)
            fns.append(fn)
            queue.append(fn)
            return node_id

        root_ids: list[int | None] = []
        for tensor in tensors:
            fn = tensor.grad_fn
            if fn is None and tensor.requires_grad:
                fn = torch.autograd.graph.get_gradient_edge(tensor).node
            root_ids.append(discover(fn) if fn is not None else None)

        nodes: list[Node] = []
        edges: list[Edge] = []
        parents: list[list[int]] = []
        while queue:
            fn = queue.popleft()
            src = len(nodes)
            nodes.append(self.node(src, fn))
            parents.append([])
            for slot, (nxt, input_nr) in enumerate(fn.next_functions):
                if nxt is None:
                    continue
                dst = discover(nxt)
                if dst is not None:
                    edges.append(Edge(src, dst, slot, int(input_nr)))
        for edge in edges:
            parents[edge.dst].append(edge.src)

        depth, hold = _deepfree.hold_points(parents, *_children_and_order(len(nodes), edges))
        if hold:
            _deepfree.protect((fns[i] for i in hold), roots=tensors)

        roots = tuple(
            self.root(i, tensor, node_id, len(tensors))
            for i, (tensor, node_id) in enumerate(zip(tensors, root_ids))
        )
        notes = [root.note for root in roots if root.note]
        if any(node.freed for node in nodes):
            notes.append(_FREED_NOTE)
        truncated = None
        if limit is not None and (dropped or len(fns) >= limit and queue):
            truncated = Truncation(max_nodes=limit, unexplored=len(dropped))
            notes.append(
                f"traced only the first {limit} nodes (max_nodes={limit}); "
                f"at least {len(dropped)} more were reached but not followed."
            )
        return Graph(
            nodes=tuple(nodes),
            edges=tuple(edges),
            roots=roots,
            truncated=truncated,
            notes=tuple(notes),
            depth=depth if nodes else 0,
        )


def _children_and_order(count: int, edges: list[Edge]) -> tuple[list[int], list[int]]:
    """Children per node and a topological order (parents first), by Kahn's algorithm."""
    children: list[list[int]] = [[] for _ in range(count)]
    indegree = [0] * count
    for edge in edges:
        children[edge.src].append(edge.dst)
        indegree[edge.dst] += 1
    order = [i for i in range(count) if not indegree[i]]
    position = 0
    while position < len(order):
        for child in children[order[position]]:
            indegree[child] -= 1
            if not indegree[child]:
                order.append(child)
        position += 1
    return [len(c) for c in children], order
