"""Learning-rate schedules: a schedule that drove the learning rate to nothing while the
optimizer kept stepping (GP166).

A scheduler multiplies each parameter group's initial learning rate (``initial_lr``) by a
factor that falls with its own step count. Stepped more often than its parameters assume (a
per-epoch ``StepLR``/``ExponentialLR``/``MultiStepLR`` stepped every batch), or with a
factor too small, it takes the learning rate to a millionth of its start within a few
hundred steps, and every step after that changes the weights by nothing measurable: the
loss stops moving and nothing says why.

The check reads each optimizer's learning rates after every step. A finding needs
:data:`_LONG` consecutive steps below :data:`_TINY` of the initial rate: a cosine schedule
touching zero at its end, or a warmup starting from zero, spends a step or two there, not
that many.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gradprobe._recorder import Events
from gradprobe.checks._api import Check, Run, StepCall, register
from gradprobe.checks._common import _locations, _where
from gradprobe.findings import Finding, make_finding

__all__ = ["CollapsedSchedule"]

_TINY = 1e-6  # of the initial learning rate
_LONG = 20  # consecutive optimizer steps that low
_OPTIMIZERS = 16


@dataclass
class _Rates:
    """One optimizer's steps and its longest run of steps at a collapsed learning rate."""

    steps: int = 0
    low: int = 0  # consecutive low steps up to now
    longest: int = 0
    first_low: int = 0  # the step (1-based) where the longest run began
    ratio: float = 1.0  # the lowest ratio seen
    created: Any = None  # where the optimizer was built


@register
class CollapsedSchedule(Check):
    """A learning-rate scheduler that took the learning rate to ~0 while steps went on
    (GP166)."""

    name = "gradprobe.schedules.collapsed"
    codes = ("GP166",)

    def __init__(self) -> None:
        self.rates: dict[int, _Rates] = {}

    def on_step(self, step: StepCall) -> None:
        key = id(step.optimizer)
        rates = self.rates.get(key)
        if rates is None:
            if len(self.rates) >= _OPTIMIZERS:
                return
            rates = self.rates[key] = _Rates(created=step.created)
        ratio = _ratio(step.optimizer)
        rates.steps += 1
        if ratio is None or ratio >= _TINY:
            rates.low = 0
            return
        rates.low += 1
        rates.ratio = min(rates.ratio, ratio)
        if rates.low > rates.longest:
            rates.longest = rates.low
            rates.first_low = rates.steps - rates.low + 1

    def conclude(self, run: Run) -> Iterable[Finding]:
        found: list[Finding] = []
        for key, rates in self.rates.items():
            if rates.longest >= _LONG:
                found.extend(_collapsed(run.events, key, rates))
        return found[:1]


def _ratio(optimizer: Any) -> float | None:
    """The smallest learning rate of ``optimizer``'s groups relative to its initial one, for
    the groups a scheduler set up (they carry ``initial_lr``)."""
    ratios: list[float] = []
    for group in getattr(optimizer, "param_groups", ()):
        initial, now = group.get("initial_lr"), group.get("lr")
        if isinstance(initial, (int, float)) and isinstance(now, (int, float)) and initial > 0:
            ratios.append(float(now) / float(initial))
    return min(ratios) if ratios else None


def _collapsed(events: Events, optimizer: int, rates: _Rates) -> list[Finding]:
    schedules = [s for s in events.schedules.values() if s.optimizer == optimizer]
    if not schedules:
        return []  # the rates were set by hand: not a schedule's doing
    schedule = max(schedules, key=lambda s: s.steps)
    every_step = schedule.steps * 2 >= rates.steps
    if every_step:
        why = (
            f"{schedule.name}.step() at {_where(schedule.line)} ran {schedule.steps} times, "
            f"about once per optimizer step ({rates.steps}): a schedule whose step_size, "
            "milestones or gamma count epochs, stepped every batch, decays as many times "
            "faster as there are batches in an epoch. Step it once per epoch (after the "
            "batch loop), or give it its parameters in batches."
        )
        pairs = ((schedule.line, "cause"), (schedule.made, "created"))
    else:
        why = (
            f"The {schedule.name} built at {_where(schedule.made)} decays faster than the "
            f"run is long ({schedule.steps} scheduler steps for {rates.steps} optimizer "
            "steps): check its gamma, step_size or milestones."
        )
        pairs = ((schedule.made, "cause"), (schedule.line, "read"))
    return [
        make_finding(
            "GP166",
            message=(
                f"The learning rate of the optimizer built at {_where(rates.created)} fell "
                f"below a millionth of its initial value by optimizer step {rates.first_low} "
                f"(to {rates.ratio:.0e} at the lowest), and {rates.longest} steps ran that "
                "low: they leave the weights as they were, so training stops without an "
                f"error. {why}"
            ),
            locations=_locations(*pairs),  # type: ignore[arg-type]
            details={
                "scheduler": schedule.name,
                "scheduler_steps": schedule.steps,
                "optimizer_steps": rates.steps,
                "lowest_ratio": rates.ratio,
                "steps_that_low": rates.longest,
            },
        )
    ]
