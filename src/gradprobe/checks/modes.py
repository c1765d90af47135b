"""Modes: train/eval, dropout's training flag, inference_mode."""

from __future__ import annotations

from collections.abc import Iterable

from gradprobe import _blame
from gradprobe._evalfreeze import eval_dropouts, eval_freezes, eval_mode_training
from gradprobe.checks._api import Check, Run, register
from gradprobe.findings import Finding

__all__ = ["EvalFreeze", "EvalModeTraining", "FunctionalDropout", "InferenceTensors"]


@register
class EvalFreeze(Check):
    """``eval()`` used to freeze a part that an optimizer still updates (GP111)."""

    name = "gradprobe.modes.eval_freeze"
    codes = ("GP111",)
    reads_modules = True

    def conclude(self, run: Run) -> Iterable[Finding]:
        return eval_freezes(run.events, list(run.modules))


@register
class EvalModeTraining(Check):
    """Training continued in eval mode after a validation pass (GP131)."""

    name = "gradprobe.modes.eval_mode_training"
    codes = ("GP131",)
    reads_modules = True

    def conclude(self, run: Run) -> Iterable[Finding]:
        return eval_mode_training(run.events, list(run.modules))


@register
class FunctionalDropout(Check):
    """``F.dropout`` left at ``training=True`` inside a module in eval mode (GP132)."""

    name = "gradprobe.modes.functional_dropout"
    codes = ("GP132",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return eval_dropouts(run.events)


@register
class InferenceTensors(Check):
    """A tensor made under ``inference_mode`` used where autograd must save it (GP114)."""

    name = "gradprobe.modes.inference_tensors"
    codes = ("GP114",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _blame._inference_uses(run.events)
