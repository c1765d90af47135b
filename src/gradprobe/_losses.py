"""Losses given the wrong thing. GP133: a loss that takes logits was given probabilities.
GP135: an elementwise loss broadcast its input against a target of another shape.

``F.cross_entropy`` applies ``log_softmax`` itself, ``F.nll_loss`` expects log-probabilities,
and ``F.binary_cross_entropy_with_logits`` applies ``sigmoid`` itself. Feeding them the output
of a softmax or sigmoid (an ``nn.Softmax`` / ``nn.Sigmoid`` at the end of the model, or a call
in ``forward``) squashes the gradients: training is slow and stalls well above the loss it
could reach, with no error. The recorder notes such calls by the input's ``SoftmaxBackward0``
or ``SigmoidBackward0`` node; this names the layer or call to remove.
"""

from __future__ import annotations

import linecache
from collections.abc import Sequence

import torch

from gradprobe._blame import _top_modules, _where, location
from gradprobe._recorder import Events, SourceLine
from gradprobe.findings import Finding, LocationRole, make_finding

__all__ = ["broadcast_losses", "squashed_losses"]

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


def squashed_losses(events: Events, modules: Sequence[torch.nn.Module]) -> list[Finding]:
    """GP133 for every loss line given softmax or sigmoid output (at most three)."""
    found: list[Finding] = []
    for loss_line, (made, loss, in_module) in list(events.squashed_losses.items())[:3]:
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


def broadcast_losses(events: Events) -> list[Finding]:
    """GP135 for every elementwise loss line whose shapes broadcast (at most three)."""
    found: list[Finding] = []
    for line, (loss, given, target, shape) in list(events.broadcast_losses.items())[:3]:
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
