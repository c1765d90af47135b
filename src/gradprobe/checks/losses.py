"""Losses: what a loss function is given — probabilities where it wants logits, an (N, 1)
output against an (N,) target, a target that carries gradients, a policy-gradient weight
still attached to the critic."""

from __future__ import annotations

import linecache
from collections.abc import Iterable, Sequence
from typing import Any

import torch

from gradprobe._recorder import (
    Events,
    SourceLine,
    _names_at,
)
from gradprobe.checks._api import Check, OpCall, Run, register
from gradprobe.checks._common import _locations, _top_modules, _where, location
from gradprobe.findings import Finding, LocationRole, make_finding

__all__ = ["BroadcastTarget", "GradTarget", "ProbabilitiesToLogitLoss", "WeightedLogProb"]

Shape = tuple[int, ...]


@register
class GradTarget(Check):
    """A loss target that requires grad (GP118)."""

    name = "gradprobe.losses.grad_target"
    codes = ("GP118",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _grad_targets(run.events)


@register
class WeightedLogProb(Check):
    """Log-probabilities weighted by a value that carries the critic's graph (GP123)."""

    name = "gradprobe.losses.weighted_log_prob"
    codes = ("GP123",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _weighted_log_probs(run.events)


_F = torch.nn.functional
# losses that apply their own (log-)softmax or sigmoid -> the node that must not feed them
_WANT_LOGITS = {
    getattr(_F, name): node
    for name, node in (
        ("cross_entropy", "SoftmaxBackward0"),
        ("nll_loss", "SoftmaxBackward0"),
        ("binary_cross_entropy_with_logits", "SigmoidBackward0"),
    )
    if hasattr(_F, name)
}
# shape-only nodes looked through between a softmax or sigmoid and the loss
_SHAPE_NODES = frozenset(
    {
        "ViewBackward0",
        "UnsafeViewBackward0",
        "ReshapeAliasBackward0",
        "TransposeBackward0",
        "PermuteBackward0",
        "SqueezeBackward0",
        "SqueezeBackward1",
        "UnsqueezeBackward0",
        "CloneBackward0",
    }
)
# elementwise losses that broadcast input and target (torch only warns)
_ELEMENTWISE = frozenset(
    getattr(_F, name)
    for name in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss")
    if hasattr(_F, name)
)
_MAX_LINES = 10  # loss lines remembered per recording


def _grad_in(args: tuple[Any, ...]) -> bool:
    return any(isinstance(arg, torch.Tensor) and arg.requires_grad for arg in args)


def _input(call: OpCall) -> Any:
    return call.kwargs.get("input", call.args[0] if call.args else None)


@register
class ProbabilitiesToLogitLoss(Check):
    """softmax fed to cross_entropy/nll_loss, sigmoid to BCE-with-logits (GP133)."""

    name = "gradprobe.losses.probabilities_to_logit_loss"
    codes = ("GP133",)
    ops = frozenset(_WANT_LOGITS)
    reads_modules = True

    def __init__(self) -> None:
        # loss line -> (where the softmax/sigmoid was made, the loss, whether it was made
        # inside a module's forward: an nn.Softmax / nn.Sigmoid layer)
        self.seen: dict[SourceLine | None, tuple[SourceLine | None, str, bool]] = {}

    def on_op(self, call: OpCall) -> None:
        if not _grad_in(call.args) or call.line in self.seen or len(self.seen) >= _MAX_LINES:
            return
        scores = _input(call)
        node = scores.grad_fn if isinstance(scores, torch.Tensor) else None
        for _ in range(4):  # probs.view(-1, C) after the softmax, as in language models
            if node is None or node.name() not in _SHAPE_NODES:
                break
            node = node.next_functions[0][0] if node.next_functions else None
        if node is None or node.name() != _WANT_LOGITS[call.func]:
            return
        record = call.run.events.nodes.get((node.name(), node._sequence_nr()))
        made = record.line if record is not None else None
        inner = record is not None and made == record.outer_line
        self.seen[call.line] = (made, call.func.__name__, inner)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return squashed_losses(self.seen, run.events, list(run.modules))


@register
class BroadcastTarget(Check):
    """An elementwise loss that broadcasts (N, 1) against (N,) (GP135)."""

    name = "gradprobe.losses.broadcast_target"
    codes = ("GP135",)
    ops = _ELEMENTWISE

    def __init__(self) -> None:
        # loss line -> (loss, input shape, target shape, broadcast shape)
        self.seen: dict[SourceLine | None, tuple[str, Shape, Shape, Shape]] = {}

    def on_op(self, call: OpCall) -> None:
        if not _grad_in(call.args) or call.line in self.seen or len(self.seen) >= _MAX_LINES:
            return
        scores = _input(call)
        target = call.kwargs.get("target", call.args[1] if len(call.args) > 1 else None)
        if not isinstance(scores, torch.Tensor) or not isinstance(target, torch.Tensor):
            return
        if scores.shape == target.shape:
            return
        try:
            shape = torch.broadcast_shapes(scores.shape, target.shape)  # type: ignore[no-untyped-call]
        except RuntimeError:  # torch raises its own error
            return
        if shape.numel() <= max(scores.numel(), target.numel()):
            return  # a scalar or a broadcast row against the full tensor
        given, wanted = tuple(scores.shape), tuple(target.shape)
        self.seen[call.line] = (call.func.__name__, given, wanted, tuple(shape))

    def conclude(self, run: Run) -> Iterable[Finding]:
        return broadcast_losses(self.seen)


# -- analyses ---------------------------------------------------------------------------


def _grad_targets(events: Events) -> list[Finding]:
    if not any(b.error is None for b in events.backwards):
        return []
    return [
        make_finding(
            "GP118",
            message=(
                f"{op} at {_where(line)} was given a target that requires grad"
                + (f" (computed at {_where(origin)})" if origin else "")
                + ": backward() also differentiates through the target, so the model is "
                "pushed to move its targets toward its predictions (a DQN's TD target, an "
                "EMA teacher, a stop-gradient branch). Compute the target under "
                "torch.no_grad() or pass target.detach()."
            ),
            node=op,
            locations=_locations((origin or line, "cause"), (line, "read")),
        )
        for line, origin, op in events.grad_targets[:1]
    ]


def _weighted_log_probs(events: Events) -> list[Finding]:
    if not any(b.error is None for b in events.backwards):
        return []
    found = []
    for line, made, origin, count in events.weighted_log_probs[:1]:
        names = sorted(_names_at(made, store=True)) if made is not None else []
        name = names[0] if len(names) == 1 else None
        weight = f"{name!r}" if name else "the weight"
        found.append(
            make_finding(
                "GP123",
                message=(
                    f"A log-probability of chosen actions is multiplied at {_where(line)} by "
                    f"{weight}"
                    + (f" (made at {_where(made)})" if made is not None and made != line else "")
                    + ", which still requires grad"
                    + (f" (its graph comes from {_where(origin)})" if origin is not None else "")
                    + f" and reaches {count} parameter{'s' if count != 1 else ''} the "
                    "log-probability does not. backward() trains "
                    + ("them" if count != 1 else "it")
                    + " through this product too (gradient -log_prob × ∂weight), so the "
                    "critic or baseline behind the weight drifts toward raising "
                    "log-probabilities. Use "
                    + (f"{name}.detach()" if name else "weight.detach()")
                    + " in the policy term; train the critic with its own loss."
                ),
                tensor=name,
                locations=_locations((made or line, "cause"), (line, "read")),
            )
        )
    return found


# loss -> (the squashing function it must not be given, its layer types, what it wants, fix)
_LOSSES: dict[str, tuple[str, tuple[type[torch.nn.Module], ...], str, str]] = {
    "cross_entropy": (
        "softmax",
        (torch.nn.Softmax, torch.nn.Softmax2d),
        "logits",
        (
            "Remove the softmax and pass the raw scores to cross_entropy (apply softmax "
            "only for predictions)."
        ),
    ),
    "nll_loss": (
        "softmax",
        (torch.nn.Softmax, torch.nn.Softmax2d),
        "log-probabilities (log_softmax)",
        "Use log_softmax instead of softmax before nll_loss.",
    ),
    "binary_cross_entropy_with_logits": (
        "sigmoid",
        (torch.nn.Sigmoid,),
        "logits",
        (
            "Remove the sigmoid and pass the raw scores (or keep it and use "
            "binary_cross_entropy, which is less stable)."
        ),
    ),
}


def squashed_losses(
    seen: dict[SourceLine | None, tuple[SourceLine | None, str, bool]],
    events: Events,
    modules: Sequence[torch.nn.Module],
) -> list[Finding]:
    """GP133 for every loss line given softmax or sigmoid output (at most three)."""
    found: list[Finding] = []
    for loss_line, (made, loss, in_module) in list(seen.items())[:3]:
        squash, layer_types, wants, fix = _LOSSES[loss]
        cause = made
        text = linecache.getline(made[0], made[1]) if made else ""
        if in_module or squash not in text.lower():  # an nn.Softmax / nn.Sigmoid layer ran
            layers = [
                m
                for top in _top_modules(modules)
                for m in top.modules()
                if isinstance(m, layer_types)
            ]
            if len(layers) == 1:
                cause = events.module_lines.get(id(layers[0]), made)
        pairs: list[tuple[SourceLine | None, LocationRole]] = [
            (cause, "cause"),
            (loss_line, "read"),
        ]
        found.append(
            make_finding(
                "GP133",
                message=(
                    f"{loss} at {_where(loss_line)} is given the output of a {squash} (made at "
                    f"{_where(cause)}), but it expects {wants}: the values go through the "
                    f"{squash} twice, which flattens the gradients, so training is slow and "
                    f"stalls. {fix}"
                ),
                locations=[loc for line, role in pairs if (loc := location(line, role))],
                details={"loss": loss, "given": squash},
            )
        )
    return found


def broadcast_losses(
    seen: dict[SourceLine | None, tuple[str, Shape, Shape, Shape]],
) -> list[Finding]:
    """GP135 for every elementwise loss line whose shapes broadcast (at most three)."""
    found: list[Finding] = []
    for line, (loss, given, target, shape) in list(seen.items())[:3]:
        hint = _shape_fix(given, target)
        found.append(
            make_finding(
                "GP135",
                message=(
                    f"{loss} at {_where(line)} compares an input of shape {_shape(given)} with "
                    f"a target of shape {_shape(target)}; they broadcast to {_shape(shape)}, so "
                    "every prediction is scored against every target and the model learns to "
                    f"predict their mean. {hint}"
                ),
                locations=[loc for loc in (location(line, "cause"),) if loc],
                details={"loss": loss, "input": list(given), "target": list(target)},
            )
        )
    return found


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _shape_fix(given: tuple[int, ...], target: tuple[int, ...]) -> str:
    if given[-1:] == (1,) and given[:-1] == target:
        return "Squeeze the output (output.squeeze(-1)) or unsqueeze the target."
    if target[-1:] == (1,) and target[:-1] == given:
        return "Squeeze the target (target.squeeze(-1)) or unsqueeze the output."
    return "Make the input and target the same shape."
