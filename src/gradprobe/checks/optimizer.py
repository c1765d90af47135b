"""The training-step protocol: zero_grad, backward, (unscale, clip), step — in that order,
on the parameters that should learn."""

from __future__ import annotations

from collections.abc import Iterable

from gradprobe import _blame
from gradprobe._frozenstep import stepped_freezes
from gradprobe._stalegrad import stale_steps
from gradprobe.checks._api import Check, Run, register
from gradprobe.findings import Finding

__all__ = [
    "ClipOrder",
    "FrozenButStepped",
    "GradientsNotZeroed",
    "OptimizerCoverage",
    "ZeroedBeforeStep",
]


@register
class ZeroedBeforeStep(Check):
    """Gradients reset between backward and step, so the step uses none (GP110)."""

    name = "gradprobe.optimizer.zeroed_before_step"
    codes = ("GP110",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _blame._zeroed(run.events)


@register
class ClipOrder(Check):
    """Clipping before backward, or before ``scaler.unscale_`` (GP119, GP127)."""

    name = "gradprobe.optimizer.clip_order"
    codes = ("GP119", "GP127")

    def conclude(self, run: Run) -> Iterable[Finding]:
        return [*_blame._early_clips(run.events), *_blame._scaled_clips(run.events)]


@register
class GradientsNotZeroed(Check):
    """Optimizer steps on gradients never reset between iterations (GP134)."""

    name = "gradprobe.optimizer.gradients_not_zeroed"
    codes = ("GP134",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return stale_steps(run.events)


@register
class FrozenButStepped(Check):
    """A layer frozen after the optimizer was built that the optimizer still moves (GP111)."""

    name = "gradprobe.optimizer.frozen_but_stepped"
    codes = ("GP111",)
    reads_modules = True

    def conclude(self, run: Run) -> Iterable[Finding]:
        return stepped_freezes(run.events, list(run.modules))


@register
class OptimizerCoverage(Check):
    """Parameters that learn but no optimizer steps, optimizers built too early (GP116)."""

    name = "gradprobe.optimizer.coverage"
    codes = ("GP116",)
    reads_modules = True

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _blame.optimizer_coverage(
            run.events, list(run.modules), list(run.optimizers), dict(run.inside)
        )
