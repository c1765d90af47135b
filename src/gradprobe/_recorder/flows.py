"""Where values flow that the user did not mean to: the mode's checks of particular calls.

:class:`_FlowNotes` is a mixin of :class:`~gradprobe._recorder.mode.RecorderMode`, whose
hot path calls it for the few functions it is about: a loss given a target that requires
grad, softmax output or a target that broadcasts; log-probabilities of sampled actions
weighted by a value with parameters of its own; ``requires_grad`` switched on after the
graph was built and ``.grad`` reads that find None; an op refusing an inference tensor; a
functional dropout left training inside a module in eval mode.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from types import FrameType
from typing import Any

import torch

from gradprobe._recorder.calls import _names
from gradprobe._recorder.events import (
    _MAX_EVENTS,
    _MAX_WALK,
    Events,
    GradTarget,
    InferenceOrigin,
    InferenceUse,
    LateLeaf,
    NoneGradRead,
    NonLeafFlag,
    SourceLine,
    WeightedLogProb,
)
from gradprobe._recorder.frames import _user_line, call_from, plain_caller
from gradprobe._recorder.lines import _defaults_training
from gradprobe._recorder.ops import (
    _JOIN,
    _KEEP_LOG_PROB,
    _LOG_SOFTMAX,
    _PICK,
    _PRODUCTS,
    _SAMPLERS,
)
from gradprobe._recorder.tensors import (
    _describe,
    _grad_fn,
    _leaves_below,
    _TensorMap,
    _tensors,
)
from gradprobe._source import is_user_file

_INFERENCE_KEPT = 4096  # tensors made in inference_mode blocks whose origin is kept
INFERENCE_PER_BLOCK = 256  # results noted per entry into such a block


class _FlowNotes:
    """Checks of particular calls' arguments and results (a mixin of ``RecorderMode``)."""

    # set by RecorderMode.__init__
    events: Events
    order: Iterator[int]
    taint: _TensorMap[frozenset[int]]
    made_leaves: _TensorMap[SourceLine | None]
    turned_on: _TensorMap[tuple[int, SourceLine | None]]
    turned_off: _TensorMap[tuple[SourceLine | None]]
    cut_leaves: _TensorMap[int]
    log_probs: _TensorMap[bool]
    samples: _TensorMap[bool]
    relays: dict[tuple[Any, int], Any]
    inference_lines: list[SourceLine | None]
    inference_budget: int
    inference_made: _TensorMap[InferenceOrigin]

    def _loss_target(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """A loss whose target requires grad: note where the target's graph comes from."""
        target = kwargs.get("target", args[1] if len(args) > 1 else None)
        if not isinstance(target, torch.Tensor) or not target.requires_grad:
            return
        scores = kwargs.get("input", args[0] if args else None)
        if not isinstance(scores, torch.Tensor) or not scores.requires_grad:
            return  # the arguments swapped, the constant first: l1_loss(target, pred)
        # A target that requires grad through parameters of its own (a second model trained
        # jointly, a learned codebook) is a design; through those the prediction also
        # reaches, the model chases its own output (a TD target from the same Q-network).
        shared = _reached_leaves(scores) & _reached_leaves(target)
        if not shared:
            return
        events = self.events
        line = _user_line(sys._getframe(2))
        if any(seen == line for seen, _, _ in events.grad_targets):
            return
        origin = self._origin(target)
        if origin is not None and origin == self._origin(scores):
            # the prediction comes from the same call (a self-training target, a split of
            # one batch): that call must keep its graph, so the line to change is where the
            # target branched off, its own op
            fn = _grad_fn(target)
            record = self.events.nodes.get((fn.name(), fn._sequence_nr())) if fn else None
            origin = record.line if record is not None and record.line else origin
        events.grad_targets.append(GradTarget(line, origin, _names(func)))

    def _requires_grad(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``x.requires_grad_()`` / ``x.requires_grad = True``: note where a leaf started to
        require grad, for a ``.grad`` read that finds None (GP136)."""
        tensor = args[0] if args else None
        was = isinstance(tensor, torch.Tensor) and tensor.requires_grad
        try:
            result = call_from(plain_caller(sys._getframe(2)), self.relays, func, args, kwargs)
        except RuntimeError:
            node = _grad_fn(tensor) if isinstance(tensor, torch.Tensor) else None
            if node is not None:  # not a leaf: where did it become the result of an op?
                record = self.events.nodes.get((node.name(), node._sequence_nr()))
                made = record.line if record is not None else None
                self.events.nonleaf_flags.append(NonLeafFlag(_user_line(sys._getframe(2)), made))
            raise
        if not isinstance(tensor, torch.Tensor) or _grad_fn(tensor) is not None:
            return result
        if not was and tensor.requires_grad:
            self.turned_on.set(tensor, (next(self.order), _user_line(sys._getframe(2))))
        elif was and not tensor.requires_grad:  # frozen: does an optimizer still move it?
            self.turned_off.set(tensor, (_user_line(sys._getframe(2)),))
        return result

    def _none_grad(self, tensor: torch.Tensor, caller: FrameType) -> None:
        """``.grad`` of a leaf that requires grad is None: note the read, for a script that
        then fails on the None (GP137), and check a late requires_grad (GP136)."""
        events = self.events
        if len(events.none_grad_reads) < 20:
            line = _user_line(caller)
            if line is not None and line not in events.none_grad_reads:
                made = self.made_leaves.get(tensor)
                cut = self.cut_leaves.get(tensor)
                calls = len(events.backwards) + events.window.dropped_backwards
                events.none_grad_reads[line] = NoneGradRead(calls, _describe(tensor), made, cut)
        if self.turned_on:
            self._late_leaf(tensor, caller)

    def _late_leaf(self, tensor: torch.Tensor, caller: FrameType) -> None:
        """``.grad`` of a leaf is None: if its requires_grad was turned on after the graph of
        the backward since was built, that graph cannot contain it (GP136)."""
        turned = self.turned_on.get(tensor)
        events = self.events
        if turned is None or len(events.late_leaves) >= 5:
            return
        order, line = turned
        backward = next(
            (b for b in reversed(events.backwards) if b.order > order and b.error is None), None
        )
        if backward is None or any(late.turned == line for late in events.late_leaves):
            return
        before = max((b.order for b in events.backwards if b.order < order), default=-1)
        first = None  # the first node of that backward's forward, made before requires_grad
        for record in reversed(events.nodes.values()):
            if record.order <= before:
                break
            if record.order < order:
                first = record
        if first is not None:
            read = _user_line(caller)
            events.late_leaves.append(LateLeaf(line, read, backward.line, first.line))

    def _origin(self, tensor: torch.Tensor) -> SourceLine | None:
        """Where a tensor's graph comes from: the first node below it made inside a module
        (the line that called the model, ``q_net(s_next)``), else its own node's line."""
        origin: SourceLine | None = None
        fn = _grad_fn(tensor)
        queue = [fn] if fn is not None else []
        for _ in range(200):
            if not queue:
                break
            node = queue.pop(0)
            record = self.events.nodes.get((node.name(), node._sequence_nr()))
            if record is not None:
                if record.outer_line is not None:
                    return record.outer_line
                if origin is None:
                    origin = record.line
            queue.extend(child for child, _ in node.next_functions if child is not None)
        return origin

    def is_sample(self, value: Any) -> bool:
        """Whether ``value`` is a tensor of sampled actions."""
        return isinstance(value, torch.Tensor) and bool(self.samples.get(value))

    def _log_prob_flow(self, func: Any, args: tuple[Any, ...], result: Any) -> None:
        """Follow log-probabilities of chosen actions into a product with a weight that
        requires grad through parameters of its own (an advantage left attached to the
        critic): noted in ``events.weighted_log_probs``."""
        if not isinstance(result, torch.Tensor) or not args:
            return
        log_probs = self.log_probs
        if func in _LOG_SOFTMAX:
            log_probs.set(result, False)
            return
        if func in _SAMPLERS:
            self.samples.set(result, True)
            return
        first = args[0]
        if func in _JOIN:  # torch.stack(saved_log_probs)
            marks = [log_probs.get(t) for t in _tensors(first)]
            if marks and all(mark is not None for mark in marks):
                log_probs.set(result, all(marks))
            return
        if func in _KEEP_LOG_PROB or func in _PICK:
            chosen = log_probs.get(first) if isinstance(first, torch.Tensor) else None
            if chosen is None:
                return
            if not chosen and func in _PICK:  # entries picked by sampled actions
                index = args[1:] if func is not torch.Tensor.__getitem__ else _tensors(args[1])
                chosen = any(self.is_sample(i) for i in index)
            log_probs.set(result, chosen)
            return
        if func not in _PRODUCTS or len(args) < 2:
            return
        second = args[1]
        if not isinstance(first, torch.Tensor) or not isinstance(second, torch.Tensor):
            return
        if log_probs.get(first):
            log_prob, weight = first, second
        elif log_probs.get(second):
            log_prob, weight = second, first
        else:
            return
        if log_probs.get(weight) is not None or _grad_fn(weight) is None:
            return
        events = self.events
        if len(events.weighted_log_probs) >= _MAX_EVENTS:
            return
        own = set(_leaves_below(weight, _MAX_WALK, parameters=True)) - set(
            _leaves_below(log_prob, _MAX_WALK, parameters=True)
        )
        if not own:
            return  # entropy terms (probs * log_probs) reach the same parameters
        line = _user_line(sys._getframe(2))
        if any(seen == line for seen, _, _, _ in events.weighted_log_probs):
            return
        fn = _grad_fn(weight)
        record = events.nodes.get((fn.name(), fn._sequence_nr()))
        made = record.line if record is not None else line
        events.weighted_log_probs.append(
            WeightedLogProb(line, made, self._origin(weight), len(own))
        )

    def _inference_use(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """An op refused a tensor made under inference_mode: note it, where it was cut,
        and where it was made when that happened while recording."""
        cuts: set[int] = set()
        origin: InferenceOrigin | None = None
        for value in (*args, *kwargs.values()):
            for tensor in _tensors(value):
                if tensor.is_inference():
                    cuts |= self.taint.get(tensor) or frozenset()
                    origin = origin or self.inference_made.get(tensor)
        line = _user_line(sys._getframe(2))
        self.events.inference_uses.append(InferenceUse(line, tuple(sorted(cuts)), origin))

    def _inference_made(self, tensor: torch.Tensor) -> None:
        """A tensor made inside an inference_mode block: note the op's line and the
        block's, for the op that later refuses it (a bounded, weak map)."""
        self.inference_budget -= 1
        made = self.inference_made
        if len(made.entries) < _INFERENCE_KEPT and made.get(tensor) is None:
            origin = InferenceOrigin(_user_line(sys._getframe(2)), self.inference_lines[-1])
            made.set(tensor, origin)

    def _eval_dropout(self, func: Any, caller: FrameType) -> None:
        """A functional dropout left at its default training=True, run inside the forward
        of a module in eval mode: dropout stays on at inference (GP132)."""
        frame: FrameType | None = caller
        while frame is not None and not is_user_file(frame.f_code.co_filename):
            frame = frame.f_back
        owner = frame.f_locals.get("self") if frame is not None else None
        if frame is None or not isinstance(owner, torch.nn.Module) or owner.training:
            return
        line = _user_line(frame)
        found = self.events.eval_dropouts
        if line is None or line in found or len(found) >= _MAX_EVENTS:
            return
        if _defaults_training(line, _names(func)):
            found[line] = type(owner).__name__


def _reached_leaves(tensor: torch.Tensor) -> set[int]:
    """ids of the leaves that require grad ``tensor`` depends on (itself, for a leaf)."""
    if _grad_fn(tensor) is None:
        return {id(tensor)}
    return set(_leaves_below(tensor, 20_000))
