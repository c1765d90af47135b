"""Walk ``grad_fn`` / ``next_functions`` into a :class:`~gradprobe.graph.Graph`.

The walk is a breadth-first search with an explicit queue (never recursion), visiting
``next_functions`` in slot order from the roots in the order given, so the same program
gives the same node ids every run. It copies out names, shapes, dtypes and versions and
keeps no torch object; see ``_deepfree`` for why deep graphs are then held briefly.
"""

from __future__ import annotations

import gc
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import torch
from torch import Tensor

from gradprobe import _active, _deepfree
from gradprobe._compat import compiled_region
from gradprobe.errors import GradprobeTypeError, GradprobeValueError, describe
from gradprobe.graph import (
    Edge,
    FrozenMap,
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

_dtype_names: dict[torch.dtype, str] = {}


def trace(
    *tensors: torch.Tensor | Sequence[torch.Tensor],
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
    roots = flatten(tensors)
    table = name_table(model, names)
    limit = _check_max_nodes(max_nodes)
    # The walk allocates millions of small objects that form no cycles; letting the cyclic
    # collector run meanwhile re-scans every live node wrapper again and again (~3x slower).
    collecting = gc.isenabled()
    gc.disable()
    try:
        graph = _Walk(table, limit).run(roots)
    finally:
        if collecting:
            gc.enable()
    if model is None:
        return graph
    return replace(graph, model=type(model).__name__, module_types=module_types(model))


# -- argument checking ------------------------------------------------------------------------


class _Leave:
    """Marks, on :func:`flatten`'s stack, where the walk leaves a list."""

    __slots__ = ("container",)

    def __init__(self, container: int) -> None:
        self.container = container


def flatten(tensors: tuple[Any, ...]) -> list[torch.Tensor]:
    if not tensors:
        msg = (
            "trace() needs at least one tensor to start from, e.g. trace(loss) or "
            "trace(*outputs); it was called with none."
        )
        raise GradprobeValueError(msg)
    out: list[torch.Tensor] = []
    stack: list[Any] = list(reversed(tensors))
    inside: set[int] = set()  # the lists being expanded: one met again inside is a cycle
    while stack:
        item = stack.pop()
        if isinstance(item, _Leave):
            inside.discard(item.container)
        elif isinstance(item, torch.Tensor):
            out.append(item)
        elif isinstance(item, (list, tuple)):
            if id(item) in inside:
                msg = (
                    f"trace() was given a {type(item).__name__} that contains itself, so it "
                    "has no end to follow. Pass the tensors themselves, e.g. trace(loss) or "
                    "trace(*outputs)."
                )
                raise GradprobeValueError(msg)
            inside.add(id(item))
            stack.append(_Leave(id(item)))
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


def module_types(model: torch.nn.Module) -> FrozenMap:
    """``{"layer1.0": "Bottleneck", ...}``: each named sub-module's class name (not the
    root's, which is ``Graph.model``)."""
    return FrozenMap(
        {name: type(module).__name__ for name, module in model.named_modules() if name}
    )


def name_table(model: object, names: object) -> dict[int, tuple[str, TensorKind]]:
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


_new = object.__new__
_set = object.__setattr__
_tuple_new = tuple.__new__


def _make(cls: type[Any], fields: dict[str, Any]) -> Any:
    """Build a frozen dataclass from a complete field dict, skipping the generated __init__.

    The walk builds one Node and a few SavedTensors per autograd node; the generated
    frozen __init__ costs ~0.9 us each (one object.__setattr__ per field), a third of a
    bare graph walk. ``fields`` must name every field (tests compare against __init__).
    """
    obj = _new(cls)
    _set(obj, "__dict__", fields)
    return obj


_EMPTY = FrozenMap()


def _really_freed(fn: Any, plan: _Plan) -> bool:
    """Whether a node whose saved slots all read as None was freed by backward.

    An unneeded slot reads as None too (``addcmul`` saves neither factor when only
    ``self`` requires grad). Reading the unpacked ``_saved_*`` of a freed slot raises
    "...backward through the graph a second time...", while an unneeded one returns None.
    """
    for _, slot, _ in plan.slots:
        try:
            getattr(fn, "_saved_" + slot)
        except RuntimeError:
            return True
    return False


class _Plan:
    """What to read from every node of one autograd class."""

    __slots__ = ("custom", "kind", "slots")

    def __init__(self, fn: Any) -> None:
        name = fn.name()
        self.custom = isinstance(fn, torch.autograd.function.BackwardCFunction)
        self.kind: NodeKind = "op"
        if name == _ACCUMULATE_GRAD:
            self.kind = "accumulate_grad"
        elif self.custom:
            self.kind = _OPAQUE_KINDS.get(name, "custom_function")
        # (attribute, slot name, is_output) per saved tensor, for built-in nodes.
        self.slots = tuple(
            (attr, attr[11:], attr[11:].startswith("result"))
            for attr in sorted(a for a in dir(fn) if a.startswith("_raw_saved_"))
            if not self.custom
        )


def _recorded_nodes() -> list[Mapping[tuple[str, int], Any]]:
    """What the recordings active in this thread know of each node (``record()`` notes
    every saved tensor's version at save time, which PyTorch itself does not keep), so a
    trace inside ``record()`` can say which saved tensors went stale."""
    nodes = []
    for recording in _active.RECORDINGS.own():
        events = getattr(recording, "_events", None)
        found = getattr(events, "nodes", None)
        if isinstance(found, Mapping) and found:
            nodes.append(found)
    return nodes


def _fill_saved_versions(
    saved: list[SavedTensor], key: tuple[str, int], recorded: list[Mapping[tuple[str, int], Any]]
) -> None:
    """Set ``version_saved`` of a node's fresh SavedTensors from what a recording noted."""
    for nodes in recorded:
        record = nodes.get(key)
        if record is None:
            continue
        saves = record.saves
        for item in saved:
            noted = saves.get(item.slot)
            if noted is not None:
                item.__dict__["version_saved"] = noted[0]  # built by _make, not yet shared
        return


class _Walk:
    """One traversal; holds the torch objects only for the duration of :meth:`run`."""

    def __init__(self, table: dict[int, tuple[str, TensorKind]], limit: int | None) -> None:
        self.table = table
        self.limit = limit
        self.devices: dict[torch.device, str] = {}
        self.recorded = _recorded_nodes()

    def device(self, tensor: torch.Tensor) -> str:
        device = tensor.device
        name = self.devices.get(device)
        if name is None:
            name = self.devices[device] = str(device)
        return name

    def saved_tensor(self, slot: str, tensor: torch.Tensor, is_output: bool) -> SavedTensor:
        named = self.table.get(id(tensor))
        return _make(  # type: ignore[no-any-return]
            SavedTensor,
            {
                "slot": slot,
                "shape": tuple(tensor.shape),
                "dtype": _dtype_name(tensor.dtype),
                "device": self.device(tensor),
                "version_now": _version(tensor),
                "version_saved": None,
                "name": named[0] if named else None,
                "is_output": is_output,
                "packed": None,
            },
        )

    def unusual_saved(self, slot: str, value: object, is_output: bool) -> list[SavedTensor]:
        """Saved values that are not plain tensors: tensor lists, and hook-packed objects."""
        if isinstance(value, tuple) and all(
            isinstance(item, torch._C._autograd.SavedTensor) for item in value
        ):  # e.g. IndexBackward0's `indices`
            out = []
            for i, item in enumerate(value):
                tensor = item.data
                if tensor is None:
                    continue
                if isinstance(tensor, Tensor):
                    out.append(self.saved_tensor(f"{slot}[{i}]", tensor, is_output))
                else:
                    out.extend(self.unusual_saved(f"{slot}[{i}]", tensor, is_output))
            return out
        # A saved_tensors_hooks pack result: save_on_cpu packs (device, tensor), the
        # non-reentrant checkpoint a placeholder. Describe a tensor inside it if any.
        inner = (
            next(
                (item for item in value if isinstance(item, Tensor)),
                None,
            )
            if isinstance(value, (tuple, list))
            else None
        )
        fields: dict[str, Any] = {
            "slot": slot,
            "shape": (),
            "dtype": "unknown",
            "device": "unknown",
            "version_now": None,
            "version_saved": None,
            "name": None,
            "is_output": is_output,
            "packed": type(value).__name__,
        }
        if inner is not None:
            fields.update(
                shape=tuple(inner.shape), dtype=_dtype_name(inner.dtype), device=self.device(inner)
            )
        return [_make(SavedTensor, fields)]

    def saved(self, fn: Any, plan: _Plan) -> tuple[tuple[SavedTensor, ...], bool]:
        """Saved tensors of one node, and whether backward already freed them."""
        out: list[SavedTensor] = []
        if plan.custom:
            try:
                raws = fn._raw_saved_tensors
            except RuntimeError:  # a custom Function whose graph was freed
                return (), True
            for i, raw in enumerate(raws):
                tensor = raw.data
                if isinstance(tensor, Tensor):
                    out.append(self.saved_tensor(f"saved_tensors[{i}]", tensor, False))
                elif tensor is not None:
                    out.extend(self.unusual_saved(f"saved_tensors[{i}]", tensor, False))
            return tuple(out), False
        return tuple(out), False

    def leaf(self, fn: Any) -> Leaf:
        variable = fn.variable
        named = self.table.get(id(variable))
        return Leaf(
            name=named[0] if named else None,
            kind=named[1] if named else "tensor",
            shape=tuple(variable.shape),
            dtype=_dtype_name(variable.dtype),
            device=self.device(variable),
            requires_grad=bool(variable.requires_grad),
            is_leaf=bool(variable.is_leaf),
            retains_grad=bool(variable.retains_grad),
            has_grad=variable.grad is not None,
        )

    def node(self, node_id: int, fn: Any, plan: _Plan) -> Node:
        if plan.kind == "accumulate_grad":
            return Node(
                id=node_id, name=_ACCUMULATE_GRAD, kind="accumulate_grad", leaf=self.leaf(fn)
            )
        saved, freed = self.saved(fn, plan) if plan.slots or plan.custom else ((), False)
        metadata = _EMPTY
        if plan.kind == "compiled":  # one box for the whole torch.compile region
            region = compiled_region(fn)
            region["forward"] = f"torch.compile: {region.get('forward', 'compiled region')}"
            metadata = FrozenMap(region)
        elif plan.custom:
            forward = fn._forward_cls
            metadata = FrozenMap({"forward": f"{forward.__module__}.{forward.__qualname__}"})
        sequence_nr = fn._sequence_nr()
        if self.recorded and saved:
            _fill_saved_versions(list(saved), (fn.name(), sequence_nr), self.recorded)
        return _make(  # type: ignore[no-any-return]
            Node,
            {
                "id": node_id,
                "name": fn.name(),
                "kind": plan.kind,
                "sequence_nr": sequence_nr,
                "saved": saved,
                "leaf": None,
                "freed": freed,
                "metadata": metadata,
            },
        )

    def root(
        self, index: int, tensor: torch.Tensor, node_id: int | None, count: int, cut: bool
    ) -> Root:
        named = self.table.get(id(tensor))
        name = named[0] if named else ("output" if count == 1 else f"output[{index}]")
        note = None
        if cut:
            note = f"{name} was not traced: max_nodes={self.limit} was reached before it."
        elif node_id is None:
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
            device=self.device(tensor),
            requires_grad=bool(tensor.requires_grad),
            is_leaf=bool(tensor.is_leaf),
            node=node_id,
            note=note,
        )

    def run(self, tensors: list[torch.Tensor]) -> Graph:
        # Breadth-first: discovery order is visiting order, so `fns` is the queue and a
        # node's id is its index in it. `seqs` holds each node's sequence number (-1 for
        # AccumulateGrad) for the deep-free bands, see _deepfree.hold_points_by_sequence.
        seen: dict[Any, int] = {}
        fns: list[Any] = []
        seqs: list[int] = []
        limit = self.limit if self.limit is not None else -1
        dropped: set[Any] = set()
        root_ids: list[int | None] = []
        root_fns: list[Any] = []
        for root in tensors:
            fn = root.grad_fn
            if fn is None and root.requires_grad:
                fn = torch.autograd.graph.get_gradient_edge(root).node
            root_fns.append(fn)
            node_id = seen.get(fn) if fn is not None else None
            if fn is not None and node_id is None:
                if len(fns) == limit:
                    dropped.add(fn)
                else:
                    node_id = seen[fn] = len(fns)
                    fns.append(fn)
                    sequence_nr = fn._sequence_nr()
                    seqs.append(-1 if sequence_nr == _NO_SEQUENCE else sequence_nr)
            root_ids.append(node_id)

        plans: dict[type, _Plan] = {}
        nodes: list[Node] = []
        edges: list[Edge] = []
        add_node = nodes.append
        add_edge = edges.append
        add_fn = fns.append
        add_seq = seqs.append
        lookup = seen.get
        table_get = self.table.get
        device_of = self.device
        devices = self.devices
        dtypes = _dtype_names
        band = _deepfree.BAND
        recorded = self.recorded
        crossings: list[int] = []  # nodes entered from another band of sequence numbers
        monotonic = True  # every edge goes to a lower sequence number (single thread)
        position = 0
        while position < len(fns):
            fn = fns[position]
            plan = plans.get(type(fn))
            if plan is None:
                plan = plans[type(fn)] = _Plan(fn)
            sequence_nr = seqs[position]
            if plan.kind == "op":  # built-in ops, the vast majority: inlined for speed
                saved: list[SavedTensor] = []
                missing = 0
                for attr, slot_name, is_output in plan.slots:
                    try:
                        raw = getattr(fn, attr)
                    except RuntimeError:  # a tensor-list slot of a freed graph raises
                        missing += 1
                        continue
                    tensor: Any = raw.data if type(raw) is not tuple else raw
                    if tensor is None:
                        missing += 1
                        continue
                    if not isinstance(tensor, Tensor):  # a list slot, or packed by hooks
                        odd = self.unusual_saved(slot_name, tensor, is_output)
                        saved.extend(odd)
                        missing += not odd
                        continue
                    named = table_get(id(tensor))
                    dtype = dtypes.get(tensor.dtype) or _dtype_name(tensor.dtype)
                    device = devices.get(tensor.device) or device_of(tensor)
                    try:
                        version: int | None = tensor._version
                    except RuntimeError:  # inference tensors have no version counter
                        version = None
                    item = _new(SavedTensor)
                    _set(
                        item,
                        "__dict__",
                        {
                            "slot": slot_name,
                            "shape": tuple(tensor.shape),
                            "dtype": dtype,
                            "device": device,
                            "version_now": version,
                            "version_saved": None,
                            "name": named[0] if named else None,
                            "is_output": is_output,
                            "packed": None,
                        },
                    )
                    saved.append(item)
                if recorded and saved:
                    _fill_saved_versions(saved, (fn.name(), sequence_nr), recorded)
                node = _new(Node)
                _set(
                    node,
                    "__dict__",
                    {
                        "id": position,
                        "name": fn.name(),
                        "kind": "op",
                        "sequence_nr": sequence_nr,
                        "saved": tuple(saved),
                        "leaf": None,
                        # An unneeded slot also reads as None (x * 2.0 saves no `self`), so
                        # a node counts as freed only when every slot it has is empty.
                        "freed": missing == len(plan.slots) and _really_freed(fn, plan),
                        "metadata": _EMPTY,
                    },
                )
                add_node(node)
            else:
                add_node(self.node(position, fn, plan))
            slot = 0
            for nxt, input_nr in fn.next_functions:
                if nxt is not None:
                    dst = lookup(nxt)
                    if dst is None:
                        if len(fns) == limit:
                            dropped.add(nxt)
                            slot += 1
                            continue
                        dst = seen[nxt] = len(fns)
                        add_fn(nxt)
                        child_nr = nxt._sequence_nr()
                        add_seq(-1 if child_nr == _NO_SEQUENCE else child_nr)
                    add_edge(_tuple_new(Edge, (position, dst, slot, input_nr)))
                    child_nr = seqs[dst]
                    if child_nr >= 0:
                        if child_nr >= sequence_nr:
                            monotonic = False
                        elif child_nr // band != sequence_nr // band:
                            crossings.append(dst)
                slot += 1
            position += 1

        if len(nodes) > band:  # a smaller graph cannot hold a longer path
            hold = _deepfree.hold_points_by_sequence(seqs, crossings) if monotonic else None
            if hold is None:
                children: list[list[int]] = [[] for _ in nodes]
                for edge in edges:
                    children[edge.src].append(edge.dst)
                hold = _deepfree.hold_points(children)
            if hold:
                _deepfree.protect((fns[i] for i in hold), roots=tensors)

        roots = tuple(
            self.root(i, tensor, node_id, len(tensors), cut=node_id is None and fn in dropped)
            for i, (tensor, node_id, fn) in enumerate(zip(tensors, root_ids, root_fns, strict=True))
        )
        notes = [root.note for root in roots if root.note]
        if any(node.freed for node in nodes):
            notes.append(_FREED_NOTE)
        truncated = None
        if dropped:
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
        )


def live_nodes(roots: list[torch.Tensor], count: int) -> list[Any]:
    """The live autograd nodes in trace()'s order (roots in order, then BFS by slot)."""
    seen: set[Any] = set()
    fns: list[Any] = []
    for root in roots:
        fn = root.grad_fn
        if fn is None and root.requires_grad:
            fn = torch.autograd.graph.get_gradient_edge(root).node
        if fn is not None and fn not in seen and len(fns) < count:
            seen.add(fn)
            fns.append(fn)
    position = 0
    while position < len(fns):
        for nxt, _ in fns[position].next_functions:
            if nxt is not None and nxt not in seen and len(fns) < count:
                seen.add(nxt)
                fns.append(nxt)
        position += 1
    return fns
