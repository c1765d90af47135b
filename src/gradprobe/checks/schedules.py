"""Learning-rate schedules: a schedule that drove the learning rate to nothing while the
optimizer kept stepping (GP166), and a learning rate the user's code multiplied by a factor
at every step, so the factor compounded (GP172).

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

The same collapse without a scheduler is the user's own writes to ``param_group["lr"]``. A
factor meant to be applied once (a layer-wise decay, a per-group multiplier) written as
``group["lr"] = group["lr"] * scale`` inside the step is applied at every step: after ``k``
steps the rate is ``scale ** k`` of its start. GP172 needs the same evidence as GP166 (the
rate of a group that no scheduler drives below :data:`_TINY` of its peak for :data:`_LONG`
steps) and a constant factor between consecutive steps (:data:`_STEADY` steps in a row), the
signature of compounding: a hand-written warmup, cosine or step decay does not multiply by
the same factor at every step. The line named is the write of ``["lr"]`` that reads the old
rate, found in the source of the functions on the stack when the rate changed.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from gradprobe._recorder import Events, SourceLine
from gradprobe._source import is_user_file
from gradprobe.checks._api import Check, Run, StepCall, register
from gradprobe.checks._common import _locations, _where
from gradprobe.checks._lr_writes import LrWrite, calls_to, lr_writes
from gradprobe.findings import Finding, LocationRole, make_finding

__all__ = ["CollapsedSchedule", "CompoundedRate"]

_TINY = 1e-6  # of the initial learning rate
_LONG = 20  # consecutive optimizer steps that low
_OPTIMIZERS = 16
_GROUPS = 64  # param groups followed per optimizer (one per layer in layer-wise decay)
_STEADY = 3  # consecutive steps multiplied by one factor: compounding, not a schedule
_SAME = 1e-9  # relative difference between two factors taken as one (float rounding)
_STACKS = 4  # stacks looked at per optimizer when its rates change
_FUNCTIONS = 32  # user functions kept from those stacks
_FILES = 16  # user files whose writes of ["lr"] are read


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


# -- GP172: a factor applied to param_group["lr"] at every step ------------------------------


@dataclass
class _Group:
    """One param group's learning rate over the steps."""

    last: float = 0.0
    peak: float = 0.0
    factor: float = 1.0  # lr / the previous step's lr
    same: int = 0  # consecutive steps with that factor
    steady: float = 1.0  # a factor kept _STEADY steps in a row (< 1), or 1.0
    low: int = 0
    longest: int = 0
    first_low: int = 0
    lowest: float = 1.0  # the lowest ratio to the peak


@dataclass
class _Hand:
    """One optimizer's groups, and the user's functions on the stack when rates changed."""

    created: Any = None
    line: SourceLine | None = None  # its step() call
    steps: int = 0
    groups: list[_Group] = field(default_factory=list)
    stacks: int = 0
    functions: dict[tuple[str, str], None] = field(default_factory=dict)  # (file, function)
    files: dict[str, None] = field(default_factory=dict)  # theirs, and their helpers' modules


@register
class CompoundedRate(Check):
    """A learning rate the user's code multiplied by a factor at every step, so the factor
    compounded and drove it to ~0 (GP172)."""

    name = "gradprobe.schedules.compounded"
    codes = ("GP172",)

    def __init__(self) -> None:
        self.hands: dict[int, _Hand] = {}

    def on_step(self, step: StepCall) -> None:
        hand = self.hands.get(id(step.optimizer))
        if hand is None:
            if len(self.hands) >= _OPTIMIZERS:
                return
            hand = self.hands[id(step.optimizer)] = _Hand(created=step.created)
        hand.steps += 1
        hand.line = step.line
        changed = False
        for index, group in enumerate(getattr(step.optimizer, "param_groups", ())[:_GROUPS]):
            lr = group.get("lr") if "initial_lr" not in group else None  # GP166's
            if index == len(hand.groups):
                hand.groups.append(_Group())
            if isinstance(lr, (int, float)):
                changed |= _advance(hand.groups[index], float(lr), hand.steps)
        if changed and hand.stacks < _STACKS:
            hand.stacks += 1
            _note_stack(hand)

    def conclude(self, run: Run) -> Iterable[Finding]:
        for hand in self.hands.values():
            collapsed = [
                (index, group)
                for index, group in enumerate(hand.groups)
                if group.longest >= _LONG and group.steady < 1.0
            ]
            if collapsed:
                return _compounded(hand, collapsed)
        return []


def _advance(group: _Group, lr: float, steps: int) -> bool:
    """Take one step's rate into ``group``; whether it changed since the previous step."""
    changed = steps > 1 and lr != group.last
    if steps > 1 and group.last > 0:
        factor = lr / group.last
        if factor != 1.0 and abs(factor - group.factor) <= _SAME * abs(group.factor):
            group.same += 1
            if group.same >= _STEADY - 1 and factor < 1.0 and group.steady == 1.0:
                group.steady = factor
        else:
            group.same = 0
        group.factor = factor
    group.last = lr
    group.peak = max(group.peak, lr)
    if group.peak > 0 and lr < _TINY * group.peak:
        group.low += 1
        group.lowest = min(group.lowest, lr / group.peak)
        if group.low > group.longest:
            group.longest = group.low
            group.first_low = steps - group.low + 1
    else:
        group.low = 0
    return changed


def _note_stack(hand: _Hand) -> None:
    """The user's functions on the stack now, and the user's files their modules import
    from: the code that wrote the rates runs in one of those functions, or in a helper one
    of them called (``adjust_learning_rate(optimizer, epoch)`` from a utils module)."""
    frame = sys._getframe(2)
    while frame is not None and len(hand.functions) < _FUNCTIONS:
        code = frame.f_code
        if is_user_file(code.co_filename):
            hand.functions[(code.co_filename, code.co_name)] = None
            hand.files[code.co_filename] = None
            # helpers imported at the top of the file, or inside main() (its locals)
            for value in [*frame.f_globals.values(), *frame.f_locals.values()]:
                filename = _defined_in(value)
                if filename and len(hand.files) < _FILES and is_user_file(filename):
                    hand.files[filename] = None
        frame = frame.f_back  # type: ignore[assignment]


def _defined_in(value: Any) -> str | None:
    if isinstance(value, types.FunctionType):
        return value.__code__.co_filename
    if isinstance(value, types.ModuleType):
        return getattr(value, "__file__", None)
    if isinstance(value, type):
        return getattr(sys.modules.get(value.__module__), "__file__", None)
    return None


def _write_line(hand: _Hand) -> LrWrite | None:
    """The write of ``["lr"]`` that multiplies the old rate: one inside a function on the
    stack first, else the only one in the files looked at."""
    writes = [w for filename in hand.files for w in lr_writes(filename) if w.compounds]
    inside = [w for w in writes if (w.line[0], w.line[2]) in hand.functions]
    for found in (inside, writes):
        if len(found) == 1:
            return found[0]
    return None


def _call_site(hand: _Hand, write: LrWrite) -> SourceLine | None:
    """For a write in a helper that had returned when the step ran, the one line of a
    function on the stack that calls that helper: calling it at every step is the mistake
    (a per-epoch decay called per batch), not the helper."""
    if (write.line[0], write.line[2]) in hand.functions or write.line[2] == "<module>":
        return None
    sites = [
        site
        for filename in dict.fromkeys(f for f, _ in hand.functions)
        for site in calls_to(filename, write.line[2])
        if (site[0], site[2]) in hand.functions
    ]
    return sites[0] if len(sites) == 1 else None


def _compounded(hand: _Hand, collapsed: list[tuple[int, _Group]]) -> list[Finding]:
    index, group = min(collapsed, key=lambda pair: pair[1].first_low)
    groups = [i for i, _ in collapsed]
    write = _write_line(hand)
    site = _call_site(hand, write) if write is not None else None
    others = [i for i in groups if i != index]
    also = (
        f" (and param {'group' if len(others) == 1 else 'groups'} {_listed(others)} the same way)"
        if others
        else ""
    )
    where = ""
    if write is not None and site is not None:
        where = (
            f" {write.line[2]}() multiplies param_group['lr'] at {_where(write.line)}, and "
            f"{_where(site)} calls it at every step, so the factor compounds."
        )
    elif write is not None:
        where = (
            f" At {_where(write.line)} param_group['lr'] is set from its own previous value, "
            "so the factor is applied again at every step."
        )
    pairs: tuple[tuple[SourceLine | None, LocationRole], ...] = (
        (site or (write.line if write else None), "cause"),
        (write.line if site and write else None, "read"),
        (hand.created, "created"),
        (hand.line, "read"),
    )
    return [
        make_finding(
            "GP172",
            message=(
                f"The learning rate of param group {index} of the optimizer built at "
                f"{_where(hand.created)} was multiplied by {group.steady:.3g} at every step "
                f"and fell below a millionth of its peak by step {group.first_low} (to "
                f"{group.lowest:.0e} of it){also}; {group.longest} steps ran that low and "
                f"left its parameters as they were.{where}"
            ),
            locations=_locations(*pairs),
            details={
                "groups": groups[:20],
                "factor": group.steady,
                "lowest_ratio": group.lowest,
                "steps_that_low": group.longest,
                "optimizer_steps": hand.steps,
            },
        )
    ]


def _listed(numbers: list[int]) -> str:
    shown = [str(n) for n in numbers[:6]]
    more = f" and {len(numbers) - 6} more" if len(numbers) > 6 else ""
    if len(shown) == 1:
        return shown[0]
    return (
        (", ".join(shown[:-1]) + f" and {shown[-1]}" + more)
        if not more
        else ", ".join(shown) + more
    )
