"""Numerics: where the first NaN or infinity was born, in the forward pass or in a backward
formula, and gradients that became non-finite."""

from __future__ import annotations

from collections.abc import Iterable

from gradprobe import _blame
from gradprobe.checks._api import Check, Run, register
from gradprobe.findings import Finding

__all__ = ["NonFiniteOrigin"]


@register
class NonFiniteOrigin(Check):
    """The op that first produced NaN/Inf from finite inputs (GP201, GP202)."""

    name = "gradprobe.numerics.non_finite_origin"
    codes = ("GP201", "GP202")
    reads_modules = True

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _blame._nan_findings(run.events, list(run.modules))
