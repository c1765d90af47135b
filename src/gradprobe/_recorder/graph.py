"""New autograd nodes: recorded with what they saved, and watched during backward.

:class:`_GraphNotes` is a mixin of :class:`~gradprobe._recorder.mode.RecorderMode`: the
mode's hot path finds a call's new node and hands it to :meth:`_discover`, which records
it and the nodes below it made in the same call, with the version and storage of each
saved tensor, and hooks the nodes a backward may turn into NaN and custom Functions.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import torch

from gradprobe import _customfn, _deepfree
from gradprobe._recorder.events import (
    _MAX_EVENTS,
    _MAX_NODES,
    BlindBackward,
    CtxWrite,
    Events,
    NodeKey,
    NodeRecord,
    NoneGrads,
    SourceLine,
)
from gradprobe._recorder.lines import _return_line
from gradprobe._recorder.ops import _CUSTOM_NODE, _NUMPY_EXIT, _RISKY
from gradprobe._recorder.tensors import (
    _all_ones,
    _checkable,
    _finite,
    _storage,
    _unknown_or_nonzero,
    _version,
)
from gradprobe._trace import _Plan as _trace_plan

_BAND = _deepfree.BAND
_NO_SEQUENCE = 2**64 - 1
_Plan = _trace_plan


class _GraphNotes:
    """Records new nodes and what they saved (a mixin of ``RecorderMode``)."""

    # set by RecorderMode.__init__
    events: Events
    check_nan: bool
    order: Iterator[int]
    plans: dict[type, Any]
    mark: int
    outer_line: SourceLine | None
    ctx_watched: set[NodeKey]
    last_exit: tuple[SourceLine | None, frozenset[int]] | None
    # RecorderMode's
    _cut: Callable[[Any, str, SourceLine | None], int]

    def _discover(self, fn: Any, line: SourceLine | None) -> None:
        """Record ``fn`` and the nodes below it made in the same call."""
        events = self.events
        nodes = events.nodes
        plans = self.plans
        mark = self.mark
        stack: list[tuple[Any, NodeKey | None]] = [(fn, None)]
        highest = mark
        while stack:
            node, parent = stack.pop()
            sequence = node._sequence_nr()
            key = (node.name(), sequence)
            known = nodes.get(key)
            if known is not None:
                if parent is not None:
                    known.consumers.append(parent)
                continue
            if sequence > highest:
                highest = sequence
            plan = plans.get(type(node))
            if plan is None:
                plan = plans[type(node)] = _Plan(node)
            saves: dict[str, tuple[int, int]] = {}
            if plan.custom:
                with contextlib.suppress(RuntimeError, AttributeError):
                    for index, raw in enumerate(node._raw_saved_tensors):
                        self._save(saves, f"saved_tensors[{index}]", raw)
            else:
                for attr, slot, _ in plan.slots:
                    try:
                        raw = getattr(node, attr)
                    except RuntimeError:
                        continue
                    if type(raw) is tuple or isinstance(raw, list):
                        for index, item in enumerate(raw):
                            self._save(saves, f"{slot}[{index}]", item)
                    else:
                        self._save(saves, slot, raw)
            nodes[key] = NodeRecord(
                next(self.order),
                line,
                key[0],
                saves,
                [parent] if parent is not None else [],
                self.outer_line,
            )
            if self.check_nan and key[0] in _RISKY and events.nan_node is None:
                node.register_hook(self._nan_watch(key))
            if isinstance(node, _CUSTOM_NODE):
                node.register_hook(self._custom_watch(node, key))
                if key not in self.ctx_watched:  # not seen by the Function.apply patch
                    self.watch_ctx(node, line)
            band = sequence // _BAND
            hold = None
            for child, _ in node.next_functions:
                if child is None:
                    continue
                child_sequence = child._sequence_nr()
                if child_sequence == _NO_SEQUENCE:
                    continue  # AccumulateGrad: a leaf, childless
                child_key = (child.name(), child_sequence)
                record = nodes.get(child_key)
                if record is not None:
                    record.consumers.append(key)
                    if (
                        record.order < events.last_backward
                        and line is not None
                        and record.line == line
                    ):  # `total += loss`: this line extends a graph already backpropagated
                        events.kept_alive.setdefault(line, set()).add(events.last_backward)
                elif child_sequence >= mark:
                    stack.append((child, key))
                if child_sequence // _BAND != band:
                    hold = [child] if hold is None else [*hold, child]
            if hold is not None:
                _deepfree.protect(hold)
            if len(nodes) > _MAX_NODES:
                nodes.popitem(last=False)
        if highest > mark:
            self.mark = highest + 1

    def _nan_watch(self, key: NodeKey) -> Callable[..., None]:
        """A node hook that notes the first backward formula turning finite gradients into
        NaN/Inf (sqrt or norm at 0, log of 0...). CPU only: on accelerators it would sync."""
        events = self.events

        def check(grad_inputs: tuple[Any, ...], grad_outputs: tuple[Any, ...]) -> None:
            if events.nan_node is not None:
                return
            outs = [g for g in grad_outputs if isinstance(g, torch.Tensor)]
            ins = [g for g in grad_inputs if isinstance(g, torch.Tensor)]
            if not ins or not all(g.device.type == "cpu" and _checkable(g) for g in ins + outs):
                return  # on accelerators it would sync; under vmap it cannot look at values
            if all(_finite(g) for g in outs) and not all(_finite(g) for g in ins):
                events.nan_node = key

        return check

    def _save(self, saves: dict[str, tuple[int, int]], slot: str, raw: Any) -> None:
        tensor = getattr(raw, "data", raw)
        if not isinstance(tensor, torch.Tensor):
            return
        version = _version(tensor)
        if version is None:
            return
        storage = _storage(tensor)
        saves[slot] = (version, storage)
        if storage:
            self.events.saved_storages.add(storage)

    def numpy_cut(self) -> frozenset[int]:
        """The cuts of values that left torch at the last exit and came back just now,
        plus the round trip itself, where the graph was really lost."""
        assert self.last_exit is not None
        line, cuts = self.last_exit
        return cuts | {self._cut(_NUMPY_EXIT, "numpy", line)}

    def _custom_watch(self, node: Any, key: NodeKey) -> Callable[..., None]:
        """A custom Function's backward that returns None for an input that needs a
        gradient (the parameter behind it silently gets none), or that computed gradients
        without reading the one it was given (see gradprobe._customfn)."""
        needs = [child is not None for child, _ in node.next_functions]
        function = getattr(node, "_forward_cls", None)
        name = getattr(function, "__name__", "Function")
        blind = function is not None and _customfn.ignores_grad_outputs(function)
        events = self.events

        def watch(grad_inputs: tuple[Any, ...], grad_outputs: tuple[Any, ...]) -> None:
            missing = [
                index
                for index, (grad, needed) in enumerate(zip(grad_inputs, needs, strict=False))
                if grad is None and needed
            ]
            if missing and len(events.none_grads) < 10:
                backward = getattr(function, "backward", None)
                events.none_grads.append(NoneGrads(name, missing, _return_line(backward)))
            if blind and not any(seen.function == name for seen in events.blind_backwards):
                grads = [g for g in grad_inputs if isinstance(g, torch.Tensor)]
                if any(_unknown_or_nonzero(g) for g in grads):
                    arrived = [g for g in grad_outputs if isinstance(g, torch.Tensor)]
                    ones = bool(arrived) and all(_all_ones(g) for g in arrived)
                    backward = getattr(function, "backward", None)
                    events.blind_backwards.append(
                        BlindBackward(name, _return_line(backward), key, ones)
                    )

        return watch

    def watch_ctx(self, node: Any, line: SourceLine | None) -> None:
        """Tensors kept on a custom Function's ctx: a node pre-hook compares their versions
        just before the backward reads them (autograd only checks save_for_backward's).
        Called by the Function.apply patch as the call returns (and at discovery for a
        Function that bypassed it)."""
        key = (node.name(), node._sequence_nr())
        if key in self.ctx_watched:
            return
        self.ctx_watched.add(key)
        if line is not None and len(self.events.applied) < _MAX_EVENTS:
            self.events.applied[key] = line
        function = getattr(node, "_forward_cls", None)
        if function is None or getattr(function, "__module__", "").startswith("torch."):
            return  # torch's own (checkpoint, hooks) keep only what they manage themselves
        found = _customfn.ctx_tensors(node)
        if not found:
            return
        order = next(self.order)
        watched = [
            (slot, weakref.ref(tensor), version, _storage(tensor))
            for slot, (tensor, version) in found.items()
        ]
        del found
        events = self.events
        name = getattr(function, "__name__", "Function")

        def check(_grad_outputs: tuple[Any, ...]) -> None:
            for slot, ref, version, storage in watched:
                tensor = ref()
                if tensor is None or len(events.ctx_writes) >= 10:
                    continue
                with contextlib.suppress(RuntimeError):
                    if tensor._version != version:
                        stored = _customfn.ctx_store_line(function, slot)
                        events.ctx_writes.append(CtxWrite(order, line, name, slot, storage, stored))

        node.register_prehook(check)
