"""``backward()`` and ``autograd.grad`` calls: recorded before they run, checked after.

:class:`_BackwardNotes` is a mixin of :class:`~gradprobe._recorder.mode.RecorderMode`:
the mode hands every backward call to :meth:`_backward`, which records the call (its
roots, retain_graph, the error it raised), lets a recording's analyses look at it before
and after, and afterwards ends the graph's use, drops what older steps no longer need
(:mod:`gradprobe._window`) and looks for non-finite gradients.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import torch

from gradprobe import _window
from gradprobe._inputs import asked_inputs
from gradprobe._recorder.calls import _AUTOGRAD_GRAD, _BACKWARD, _names
from gradprobe._recorder.events import (
    Backward,
    Events,
    LeafBackward,
    NanGrad,
    NodeKey,
    SourceLine,
    StepEvent,
)
from gradprobe._recorder.frames import (
    _from_torch_driver,
    _user_line,
    call_from,
    frameless,
    plain_caller,
)
from gradprobe._recorder.tensors import (
    _checkable,
    _describe,
    _finite,
    _grad_fn,
    _TensorMap,
    _tensors,
)

if TYPE_CHECKING:
    from gradprobe._recorder.recompute import Reruns
    from gradprobe._recorder.stalegrad import StaleGrads


class _BackwardNotes:
    """Records backward calls and checks the gradients they made (a mixin of
    ``RecorderMode``)."""

    # set by RecorderMode.__init__
    events: Events
    check_nan: bool
    order: Iterator[int]
    taint: _TensorMap[frozenset[int]]
    leaves: _TensorMap[None]
    made_leaves: _TensorMap[SourceLine | None]
    turned_on: _TensorMap[tuple[int, SourceLine | None]]
    in_optimizer: int
    stale: StaleGrads
    reruns: Reruns
    relays: dict[tuple[Any, int], Any]
    backward_hook: Callable[[Backward, Any, tuple[Any, ...], dict[str, Any]], Any] | None
    # RecorderMode's
    _cut: Callable[[Any, str, SourceLine | None], int]

    def _backward(self, func: Any, kind: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        line = _user_line(sys._getframe(1))
        roots_arg = args[0] if args else kwargs.get("tensors", kwargs.get("outputs"))
        roots = list(_tensors(roots_arg))
        keys: list[NodeKey | None] = []
        for root in roots:
            fn = _grad_fn(root)
            keys.append(None if fn is None else (fn.name(), fn._sequence_nr()))
        position = 3 if kind == _AUTOGRAD_GRAD else 2  # retain_graph's place in args
        retain = kwargs.get("retain_graph", args[position] if len(args) > position else None)
        create = bool(
            kwargs.get("create_graph", args[position + 1] if len(args) > position + 1 else False)
        )
        if retain is None:
            retain = create
        if kind == _BACKWARD:  # which leaves it fills; the others are left out on purpose
            position = 4 if func is torch.Tensor.backward else 5
            args, kwargs, inputs = asked_inputs(args, kwargs, position)
            self.events.last_inputs = None if inputs is None else frozenset(map(id, inputs))
        for root in roots:
            if (
                root.requires_grad
                and _grad_fn(root) is None
                and not isinstance(root, torch.nn.Parameter)
            ):  # backward on a leaf: nothing behind it to reach
                self.events.leaf_backwards.append(self._leaf_backward(root, line))
            elif kind == _BACKWARD and (found := _lone_leaf(root, self.events)) is not None:
                leaf, lines = found  # a loss computed from one leaf of the user's making
                if len(self.events.leaf_backwards) < _MAX_LEAF_BACKWARDS and not any(
                    seen.line == line and seen.ident == id(leaf)
                    for seen in self.events.leaf_backwards
                ):  # once per line and leaf: a loop calls it every step
                    self.events.leaf_backwards.append(self._leaf_backward(leaf, line, lines))
        event = Backward(next(self.order), line, _names(func), keys, bool(retain))
        self.events.backwards.append(event)
        hook = self.backward_hook
        if hook is not None:
            hook(event, roots, args, kwargs)
        plain = kind == _BACKWARD and not self.in_optimizer
        if plain:
            with contextlib.suppress(Exception):
                self.stale.before_backward()
        self.reruns.backward_started(line)
        try:
            result = call_from(plain_caller(sys._getframe(2)), self.relays, func, args, kwargs)
        except BaseException as error:
            event.error = error
            try:
                if hook is not None:
                    hook(event, roots, args, kwargs)
            finally:
                event.error = frameless(error)
            raise
        finally:
            self.reruns.backward_ended()
        filled = next(self.order) if kind == _BACKWARD else -1  # its protocol event's order
        if plain:
            with contextlib.suppress(Exception):
                self.stale.after_backward(line, filled)
        events = self.events
        if kind == _BACKWARD and not create and not _from_torch_driver(sys._getframe(1)):
            # autograd.grad and higher-order steps (Hessians, Newton steps, penalties, MAML)
            # build on their graphs on purpose, and autograd.functional/gradcheck/torch.func
            # run their own passes: only a plain backward() ends a graph's use.
            events.last_backward = next(self.order)
            with contextlib.suppress(Exception):  # never break the user's program
                _window.step_done(self)  # drop what no analysis needs of older steps
        if kind == _BACKWARD:  # autograd.grad returns gradients; it fills no .grad
            events.grads_pending = True
            events.protocol.append(StepEvent(filled, "backward", line))
        elif kind == _AUTOGRAD_GRAD and not create:  # gradients returned, .grad untouched
            events.protocol.append(StepEvent(next(self.order), "grad_returned", line))
        if not event.retain_graph:
            events.saved_storages.clear()
            events.suspicious = False
        if kind == _AUTOGRAD_GRAD and result is not None:
            # Gradients from autograd.grad without create_graph=True are constants, also
            # when retain_graph=True kept the graph for more of them (IRM's per-environment
            # gradients): a loss term made of them trains nothing.
            created = kwargs.get("create_graph", args[4] if len(args) > 4 else False)
            if not created:
                cut = self._cut(func, "autograd_grad", line)
                for grad in _tensors(result):
                    self.taint.set(grad, frozenset((cut,)))
        if self.check_nan:
            self._check_grads()
        return result

    def _leaf_backward(
        self,
        leaf: torch.Tensor,
        line: SourceLine | None,
        through: frozenset[SourceLine] = frozenset(),
    ) -> LeafBackward:
        made = self.made_leaves.get(leaf)
        if made is None and (turned := self.turned_on.get(leaf)) is not None:
            made = turned[1]
        return LeafBackward(
            next(self.order),
            line,
            made,
            self._no_grad_origin(leaf),
            torch.is_grad_enabled(),
            self.taint.get(leaf) or frozenset(),
            through,
            id(leaf),
        )

    def _no_grad_origin(self, root: torch.Tensor) -> tuple[SourceLine | None, SourceLine | None]:
        """For a leaf given to backward(): where gradients were turned off on the way to its
        values (a no_grad block or decorator), and where requires_grad was then switched on
        (the band-aid that silenced "does not require grad")."""
        cuts = self.taint.get(root) or frozenset()
        context = next(
            (
                cut.context
                for ident in sorted(cuts)
                if (cut := self.events.cuts.get(ident)) is not None
                and cut.kind == "no_grad"
                and cut.context is not None
            ),
            None,
        )
        turned = self.turned_on.get(root)
        return context, turned[1] if turned is not None else None

    def _check_grads(self) -> None:
        events = self.events
        if events.nan_grads:
            return
        for leaf in self.leaves.tensors():
            grad = leaf.grad
            if grad is None or not grad.is_floating_point() or grad.device.type != "cpu":
                continue
            if _checkable(grad) and not _finite(grad):
                events.nan_grads.append(
                    NanGrad(
                        id(leaf), _describe(leaf), tuple(leaf.shape), bool(torch.isnan(grad).any())
                    )
                )
                return


_LONE_WALK = 64  # nodes walked per backward: a loss through a model reaches a Parameter first
_MAX_LEAF_BACKWARDS = 16  # the check reads the first; the rest only tell lines apart


def _lone_leaf(
    root: torch.Tensor, events: Events
) -> tuple[torch.Tensor, frozenset[SourceLine]] | None:
    """The one leaf a small graph behind ``root`` reaches when it reaches no nn.Parameter
    (``torch.as_tensor(losses)`` with requires_grad switched on, then ``.sum()``), with
    the lines of its nodes; None when the walk meets a Parameter, another leaf, or more
    than ``_LONE_WALK`` nodes."""
    node = _grad_fn(root)
    if node is None:
        return None
    seen = {node}
    queue = [node]
    leaf: torch.Tensor | None = None
    lines: set[SourceLine] = set()
    for fn in queue:
        record = events.nodes.get((fn.name(), fn._sequence_nr()))
        if record is not None and record.line is not None:
            lines.add(record.line)
        variable = getattr(fn, "variable", None)
        if isinstance(variable, torch.Tensor):
            if isinstance(variable, torch.nn.Parameter) or (
                leaf is not None and leaf is not variable
            ):
                return None
            leaf = variable
        for child, _ in fn.next_functions:
            if child is not None and child not in seen:
                if len(seen) >= _LONE_WALK:
                    return None
                seen.add(child)
                queue.append(child)
    return None if leaf is None else (leaf, frozenset(lines))
