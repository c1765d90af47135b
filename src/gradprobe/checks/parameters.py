"""Parameters: how they are made, frozen, loaded and tied."""

from __future__ import annotations

from collections.abc import Iterable

from gradprobe import _blame
from gradprobe._tying import copied_ties
from gradprobe.checks._api import Check, Run, register
from gradprobe.findings import Finding

__all__ = ["CopiedTies", "EmptyLoads", "FreezeTypos"]


@register
class FreezeTypos(Check):
    """Freezing that does nothing: an attribute typo (``requires_gard``) or
    ``requires_grad = False`` set on a copy of the parameter (GP111)."""

    name = "gradprobe.parameters.freeze_typos"
    codes = ("GP111",)
    reads_modules = True

    def conclude(self, run: Run) -> Iterable[Finding]:
        return [*_blame._typos(run.events), *_blame.copy_freezes(run.events, list(run.modules))]


@register
class EmptyLoads(Check):
    """``load_state_dict(strict=False)`` that matched no key (GP117)."""

    name = "gradprobe.parameters.empty_loads"
    codes = ("GP117",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _blame.empty_loads(run.events)


@register
class CopiedTies(Check):
    """Weight tying done with ``nn.Parameter(other.clone())`` (GP130)."""

    name = "gradprobe.parameters.copied_ties"
    codes = ("GP130",)
    reads_modules = True

    def conclude(self, run: Run) -> Iterable[Finding]:
        return copied_ties(run.events, list(run.modules))
