"""GP134: a step applied gradients that were not meant for it.

A step applies what ``.grad`` holds: the sum of the backward calls since the gradients were
last reset. The recorder says, on each ``step`` event, which backward calls that sum holds
for a few parameters of the optimizer (``StepEvent.sums``). A step's gradients are meant
for it when none of those backward calls was already applied by an earlier step: a
backward an earlier step applied, followed by another one, means the gradients were not
reset between the two, and the step applies the earlier step's gradients again, or
another objective's (a generator's loss backpropagated through the discriminator, applied
by the generator's step, then by the discriminator's).

Silent by construction on gradient accumulation (a window's backward calls are applied by
one step only), on each optimizer resetting its own gradients before its backward (what
another objective left is reset before the step), on SAM's two passes (reset between), and
on a single backward applied by several optimizers (nothing is added after the first step).

The line to change is, in this order: a reset between the two backward calls that cleared
other gradients but not these (``model.zero_grad()`` of another module, another
optimizer's ``zero_grad()``); a reset of these gradients that ran again and again, but
before a backward whose gradients another step applied (too early); else the step after
which nothing reset them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from gradprobe._recorder import SourceLine, StepEvent
from gradprobe.checks._common import _locations, _where
from gradprobe.findings import Finding, make_finding

__all__ = ["Sums"]

_RECENT = 256  # resets remembered: the cause is one of the latest before a step
_ORDERS = 4096  # backward calls whose line and applying step are remembered
_LOOP = 2  # one step on such a sum can be a hand-made schedule; two are the loop's
_GROUPS = 16  # kinds of spill kept (by the lines they point at)


class Spill(NamedTuple):
    """A step (``step``) that applied the backward at order ``first``, which the earlier
    step ``used`` had applied already, and a later backward (``then``) added on top."""

    step: StepEvent
    used: StepEvent
    first: SourceLine | None
    then: SourceLine | None
    reset: StepEvent | None  # a reset between ``used`` and ``then`` that missed these
    early: StepEvent | None  # the latest reset of this optimizer's before ``first``
    early_runs: int  # how many times that reset's line had run then


How = Literal["wrong_object", "too_early", "never"]


@dataclass
class Sums:
    """What the protocol says of the backward calls each step applied."""

    applied: dict[int, StepEvent] = field(default_factory=dict)  # backward order -> step
    lines: dict[int, SourceLine | None] = field(default_factory=dict)  # backward order
    resets: deque[StepEvent] = field(default_factory=lambda: deque(maxlen=_RECENT))
    reset_lines: dict[SourceLine | None, int] = field(default_factory=dict)  # -> calls
    # the spills by the line they point at (a reset, else the step): the first of each, and
    # how many; a loop repeats one of them, a change of phase makes one more
    spills: dict[tuple[SourceLine | None, ...], tuple[Spill, int]] = field(default_factory=dict)

    def advance(self, event: StepEvent) -> None:
        if event.kind == "backward":
            self.lines[event.order] = event.line
            _trim(self.lines)
        elif event.kind == "zero":
            self.resets.append(event)
            if event.line in self.reset_lines or len(self.reset_lines) < _RECENT:
                self.reset_lines[event.line] = self.reset_lines.get(event.line, 0) + 1
        elif event.kind == "step" and not event.closure:
            # a closure's step reports the sums before its closure ran: nothing it applies
            self._step(event)

    def _step(self, step: StepEvent) -> None:
        spill = next(
            (found for sums in step.sums if (found := self._spill(step, sums)) is not None),
            None,
        )
        if spill is not None:
            key = _key(spill)
            first, count = self.spills.get(key, (spill, 0))
            if count or len(self.spills) < _GROUPS:
                self.spills[key] = (first, count + 1)
        for sums in step.sums:
            for order in sums:
                self.applied.setdefault(order, step)
        _trim(self.applied)

    def _spill(self, step: StepEvent, sums: tuple[int, ...]) -> Spill | None:
        # the latest pair: the backward an earlier step applied, then the next one added
        for i in range(len(sums) - 2, -1, -1):
            used = self.applied.get(sums[i])
            if used is not None and used.order < sums[i + 1]:
                early = self._latest(before=sums[0], optimizer=step.optimizer)
                return Spill(
                    step,
                    used,
                    self.lines.get(sums[i]),
                    self.lines.get(sums[i + 1]),
                    self._latest(after=used.order, before=sums[i + 1]),
                    early,
                    self.reset_lines.get(early.line, 0) if early else 0,
                )
        return None

    def _latest(
        self, *, before: int, after: int = -1, optimizer: int | None = None
    ) -> StepEvent | None:
        for reset in reversed(self.resets):
            if reset.order >= before:
                continue
            if reset.order <= after:
                return None
            if optimizer is None or reset.optimizer in (0, optimizer):
                return reset
        return None

    def findings(self) -> list[Finding]:
        if not self.spills:
            return []
        spill, _ = max(self.spills.values(), key=lambda item: item[1])
        total = sum(n for _, n in self.spills.values())
        if total < _LOOP:
            return []
        if spill.reset is not None:
            return [_spilled(spill, total, "wrong_object", spill.reset.line)]
        early = spill.early
        # a reset that starts the sums again while they spill is part of the loop, placed
        # too early; one that ran before the loop (or in an earlier one) is not the cause
        if early is not None and self.reset_lines.get(early.line, 0) > spill.early_runs:
            return [_spilled(spill, total, "too_early", early.line)]
        return [_spilled(spill, total, "never", spill.used.line)]


def _key(spill: Spill) -> tuple[SourceLine | None, ...]:
    reset, early = spill.reset, spill.early
    return (
        spill.step.line,
        spill.used.line,
        reset.line if reset else None,
        early.line if early else None,
    )


def _trim(orders: MutableMapping[int, Any]) -> None:
    """Keep the latest ``_ORDERS`` entries (they are added in order)."""
    if len(orders) > _ORDERS:
        for key in list(orders)[: len(orders) - _ORDERS // 2]:
            del orders[key]


# -- the finding: one wording per line to change ----------------------------------------------


def _spilled(spill: Spill, count: int, how: How, cause: SourceLine | None) -> Finding:
    step, used = spill.step, spill.used
    other = used.optimizer != step.optimizer
    if other:
        applied = (
            f"the backward at {_where(spill.first)} left gradients in its parameters that "
            f"another optimizer's step at {_where(used.line)} applied, the backward at "
            f"{_where(spill.then)} added onto them, and the step at {_where(step.line)} "
            "applied the sum"
        )
    else:
        applied = (
            f"the backward at {_where(spill.then)} added onto gradients the step at "
            f"{_where(used.line)} had applied (from the backward at {_where(spill.first)}), "
            f"and the step at {_where(step.line)} applied the sum"
        )
    what = (
        "another objective's gradients together with its own"
        if other
        else "gradients an earlier step already used, again"
    )
    why = {
        "wrong_object": (
            f"The reset at {_where(cause)} ran between those two backward calls, but it "
            f"cleared other gradients, not the ones this step applies: {applied}."
        ),
        "too_early": (
            f"The reset at {_where(cause)} ran before the backward at "
            f"{_where(spill.first)} instead of after the step at {_where(used.line)}: "
            f"{applied}."
        ),
        "never": (f"Nothing reset the gradients after the step at {_where(used.line)}: {applied}."),
    }[how]
    fix = {
        "wrong_object": (
            f"Reset the gradients of the optimizer that steps at {_where(step.line)} at "
            f"{_where(cause)} (its own zero_grad(), not another module's or optimizer's)."
        ),
        "too_early": (
            f"Move that zero_grad() to after the step at {_where(used.line)}, right "
            f"before the backward at {_where(spill.then)}."
        ),
        "never": (
            f"Call this optimizer's zero_grad() right after the step at "
            f"{_where(used.line)} (or before each backward)."
        ),
    }[how]
    return make_finding(
        "GP134",
        message=f"{why} {_steps(count)} applied {what}.",
        hint=fix,
        locations=_locations((cause, "cause"), (step.line if step.line != cause else None, "read")),
        details={"steps": count, "reset": how, "other_objective": other},
    )


def _steps(count: int) -> str:
    return "1 step" if count == 1 else f"{count} steps"
