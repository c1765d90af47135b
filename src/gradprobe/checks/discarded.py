"""Work thrown away: a statement that computes a new tensor and drops it, where the user
meant to change the tensor (``grad.clamp(-1, 1)`` for ``grad.clamp_(-1, 1)``)."""

from __future__ import annotations

from collections.abc import Iterable

from gradprobe.checks._api import Check, Run, register
from gradprobe.checks._common import _locations, _where
from gradprobe.findings import Finding, make_finding

__all__ = ["DiscardedResults"]

_IN_PLACE = frozenset(
    [
        "clamp",
        "clip",
        "masked_fill",
        "index_fill",
        "add",
        "sub",
        "mul",
        "div",
        "relu",
        "sigmoid",
        "tanh",
        "abs",
        "neg",
        "exp",
        "log",
        "sqrt",
        "pow",
        "sign",
        "round",
        "floor",
        "ceil",
        "t",
        "transpose",
        "squeeze",
        "unsqueeze",
        "masked_scatter",
        "index_add",
        "index_copy",
        "scatter",
        "scatter_add",
        "clamp_min",
        "clamp_max",
        "nan_to_num",
        "true_divide",
        "zero",
        "normal",
    ]
)


@register
class DiscardedResults(Check):
    """An out-of-place op called as a statement of its own (GP141)."""

    name = "gradprobe.discarded.results"
    codes = ("GP141",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        found = []
        for line, op in run.events.discarded[:3]:
            twin = f"{op}_" if op in _IN_PLACE else None
            found.append(
                make_finding(
                    "GP141",
                    message=(
                        f"{op} at {_where(line)} returns a new tensor and leaves its input "
                        "unchanged; called as a statement of its own, its result is thrown "
                        "away and the line does nothing. Assign the result"
                        + (f", or call the in-place {twin}" if twin else "")
                        + "."
                    ),
                    node=op,
                    locations=_locations((line, "cause")),
                    details={"op": op},
                )
            )
        return found
