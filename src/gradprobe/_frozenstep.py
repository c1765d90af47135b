"""GP111: a parameter frozen with ``requires_grad_(False)`` that optimizer steps still move.

Freezing stops new gradients, but an optimizer updates every parameter whose ``.grad`` is
not None. After ``zero_grad(set_to_none=False)`` (or with any gradient left over from before
the freeze), a frozen parameter keeps a zero or stale ``.grad``. Momentum, Adam's moments and
weight decay then keep changing it. The recorder follows parameters whose requires_grad the
user turned off through each optimizer step and notes the ones whose version moved.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from gradprobe._blame import _top_modules, _where, location
from gradprobe._recorder import Events, SourceLine
from gradprobe.findings import Finding, LocationRole, make_finding

__all__ = ["stepped_freezes"]


def stepped_freezes(events: Events, modules: Sequence[torch.nn.Module]) -> list[Finding]:
    if not events.frozen_steps:
        return []
    names: dict[int, str] = {}
    for top in _top_modules(modules):
        for name, param in top.named_parameters():
            names.setdefault(id(param), name)
    by_line: dict[tuple[SourceLine | None, SourceLine | None], list[str]] = {}
    for key, lines in events.frozen_steps.items():
        by_line.setdefault(lines, []).append(names.get(key, "a parameter"))
    found: list[Finding] = []
    for (frozen, step), params in list(by_line.items())[:3]:
        listed = ", ".join(params[:4]) + (f" and {len(params) - 4} more" if len(params) > 4 else "")
        pairs: list[tuple[SourceLine | None, LocationRole]] = [(frozen, "cause"), (step, "read")]
        found.append(
            make_finding(
                "GP111",
                message=(
                    f"{listed} {'was' if len(params) == 1 else 'were'} frozen at "
                    f"{_where(frozen)} (requires_grad=False), but the optimizer step at "
                    f"{_where(step)} still changed {'it' if len(params) == 1 else 'them'}: "
                    "the .grad left in place (zero_grad(set_to_none=False) keeps a zero "
                    "tensor) is not None, so momentum, Adam's moments or weight decay still "
                    "apply. Set the frozen parameters' .grad to None when freezing, or take "
                    "them out of the optimizer."
                ),
                locations=[loc for line, role in pairs if (loc := location(line, role))],
                details={"parameters": params[:20]},
            )
        )
    return found
