"""GP133: cross_entropy / nll_loss given softmax probabilities.

``F.cross_entropy`` applies ``log_softmax`` itself and ``F.nll_loss`` expects
log-probabilities. Feeding either the output of a softmax (an ``nn.Softmax`` at the end of
the model, ``F.softmax`` in ``forward``) squashes the gradients: training is slow and stalls
well above the loss it could reach, with no error. The recorder notes such calls by the
input's ``SoftmaxBackward0`` node; this names the softmax to remove.
"""

from __future__ import annotations

import linecache
from collections.abc import Sequence

import torch

from gradprobe._blame import _top_modules, location
from gradprobe._recorder import Events, SourceLine
from gradprobe.findings import Finding, LocationRole, make_finding

__all__ = ["softmax_losses"]


def softmax_losses(events: Events, modules: Sequence[torch.nn.Module]) -> list[Finding]:
    """GP133 for every loss line that received softmax output (at most three)."""
    found: list[Finding] = []
    for loss_line, (made, loss, in_module) in list(events.softmax_losses.items())[:3]:
        softmax = made
        text = linecache.getline(made[0], made[1]) if made else ""
        if in_module or "softmax" not in text.lower():  # an nn.Softmax layer ran there
            layers = [m for top in _top_modules(modules) for m in top.modules() if _is_softmax(m)]
            if len(layers) == 1:
                softmax = events.module_lines.get(id(layers[0]), made)
        wants = "logits" if loss == "cross_entropy" else "log-probabilities (log_softmax)"
        pairs: list[tuple[SourceLine | None, LocationRole]] = [
            (softmax, "cause"),
            (loss_line, "read"),
        ]
        found.append(
            make_finding(
                "GP133",
                message=(
                    f"{loss} at {_line(loss_line)} is given the output of a softmax (made at "
                    f"{_line(softmax)}), but it expects {wants}: the probabilities go through "
                    "a second (log-)softmax, which flattens the gradients, so training is "
                    "slow and stalls. "
                    + (
                        "Remove the softmax and pass the raw scores to cross_entropy "
                        "(apply softmax only for predictions)."
                        if loss == "cross_entropy"
                        else "Use log_softmax instead of softmax before nll_loss."
                    )
                ),
                locations=[loc for line, role in pairs if (loc := location(line, role))],
                details={"loss": loss},
            )
        )
    return found


def _is_softmax(module: torch.nn.Module) -> bool:
    return isinstance(module, torch.nn.Softmax | torch.nn.Softmax2d)


def _line(line: SourceLine | None) -> str:
    return f"line {line[1]}" if line else "an unknown line"
