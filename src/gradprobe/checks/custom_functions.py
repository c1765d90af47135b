"""Custom ``autograd.Function`` s: a backward that returns None where a gradient is needed,
that never reads the gradient it is given, or a tensor kept on ``ctx`` written in place."""

from __future__ import annotations

from collections.abc import Iterable

from gradprobe import _blame
from gradprobe.checks._api import Check, Run, register
from gradprobe.findings import Finding

__all__ = ["BlindBackward", "CtxWrites", "NoneGradients"]


@register
class NoneGradients(Check):
    """backward returned None for an input that needs a gradient (GP122)."""

    name = "gradprobe.custom_functions.none_gradients"
    codes = ("GP122",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _blame._none_grads(run.events)


@register
class BlindBackward(Check):
    """backward never reads ``grad_output`` (GP128)."""

    name = "gradprobe.custom_functions.blind_backward"
    codes = ("GP128",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _blame._blind_backwards(run.events)


@register
class CtxWrites(Check):
    """A tensor kept on ctx was written in place before backward read it (GP129)."""

    name = "gradprobe.custom_functions.ctx_writes"
    codes = ("GP129",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _blame._ctx_writes(run.events)
