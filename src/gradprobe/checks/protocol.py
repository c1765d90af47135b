"""The training-step protocol, read as one timeline per run.

The recorder writes the protocol's events in the order the user's code made them
(:class:`~gradprobe._recorder.StepEvent`): ``backward()`` calls, gradients assigned or
returned, ``.grad`` reads, gradients reset, loss scaling, clipping, optimizer steps. A step
applies what the backward calls since the previous step accumulated: the events between two
steps are one *window* (an accumulation window when it holds several backward calls).

One reader walks that timeline and keeps the state of the protocol: whether gradients are
filled that no step used yet, whether the user read them since, whether a loss scale is on
them, which optimizer stepped when. Every mistake is a transition the protocol forbids:

=======  ===============================================================================
GP110    gradients set to ``None`` after a backward and before any step used or read them
GP119    clipping with no backward since the last step (it clips what step() will not use)
GP127    clipping gradients a ``GradScaler`` scaled and nothing unscaled
GP142    the same clipping repeated after each backward of one accumulation window
GP143    a step with no backward since the same optimizer's previous step
GP144    clipping handed an iterator that was already consumed (no parameters)
GP165    a step on no gradient after ``torch.autograd.grad`` returned them
GP134    a step on gradients summed from a backward an earlier step applied and a later
         one: never reset, reset on the wrong object, or too early (``_summed.py``)
GP111    a step that still moved frozen parameters through the zero ``.grad`` they kept
GP167    an optimizer that zeroes gradients a backward filled for it, and never steps
=======  ===============================================================================

The reader consumes what is new after every optimizer step, so a long run is read whole
though the recorder keeps only the latest events.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from gradprobe._recorder import SourceLine, StepEvent
from gradprobe.checks._api import Check, Run, StepCall, register
from gradprobe.checks._common import _locations, _top_modules, _where
from gradprobe.checks._summed import Sums
from gradprobe.findings import Finding, LocationRole, make_finding

__all__ = ["StepProtocol"]


@register
class StepProtocol(Check):
    """The order of backward, reading, resetting, scaling, clipping and stepping
    (GP110, GP111, GP119, GP127, GP134, GP142-GP144, GP165, GP167)."""

    name = "gradprobe.protocol.step_order"
    codes = (
        "GP110",
        "GP111",
        "GP119",
        "GP127",
        "GP134",
        "GP142",
        "GP143",
        "GP144",
        "GP165",
        "GP167",
    )
    reads_modules = True  # GP111 names the frozen parameters

    def __init__(self) -> None:
        self.timeline = Timeline()
        # a module freed in another thread concludes there while this one steps
        self.lock = threading.Lock()

    def on_step(self, step: StepCall) -> None:
        with self.lock:
            self.timeline.read(step.run.events.protocol)

    def conclude(self, run: Run) -> Iterable[Finding]:
        with self.lock:
            self.timeline.read(run.events.protocol)
        names: dict[int, str] = {}
        if self.timeline.moved:
            for top in _top_modules(run.modules):
                for name, param in top.named_parameters():
                    names.setdefault(id(param), name)
        return self.timeline.findings(names, run.events.optimizer_lines)


@dataclass
class _Window:
    """What happened since the latest step (or the closure call that used the gradients)."""

    filled: int = -1  # order of the latest backward (or hand-assigned gradients); -1: none
    read: bool = False  # the user's code read .grad since that backward
    scaled: bool = False  # a GradScaler scaled a loss whose gradients nothing unscaled yet
    backwards: int = 0
    fills: int = 0  # backward calls and hand-assigned gradients
    clips: dict[SourceLine | None, int] = field(default_factory=dict)  # after a backward
    returned: StepEvent | None = None  # the latest autograd.grad


@dataclass
class _Cycle:
    """One optimizer's zero_grad cycle: its latest zero_grad, the first backward after it,
    and the cycles whose gradients it dropped unused."""

    zero: SourceLine | None = None
    zeroed: int = -1  # that zero_grad's order
    backward: SourceLine | None = None  # the first backward after that zero_grad
    read: bool = False  # the user's code read a gradient since that backward
    wasted: int = 0
    first: tuple[SourceLine | None, SourceLine | None] | None = None  # (backward, zero)


class _Moved(NamedTuple):
    """A frozen parameter a step still changed: where it was frozen, the first step that
    moved it, the ``zero_grad()`` of that optimizer that kept its ``.grad`` between two such
    steps (if one did), and how many steps moved it."""

    frozen: SourceLine | None
    step: SourceLine | None
    zero: SourceLine | None
    optimizer: int
    steps: int
    order: int  # the latest moving step's ``moved`` event


@dataclass
class Timeline:
    """The protocol's state, advanced one event at a time; what it found so far."""

    seen: int = -1  # order of the latest event read
    steps: int = 0
    window: _Window = field(default_factory=_Window)
    last_fill: int = -1  # order of the latest backward or hand-assigned gradients
    last_step: dict[int, StepEvent] = field(default_factory=dict)  # optimizer id -> step
    # what was found: the first of each kind (the runs after it repeat it)
    zeroed: StepEvent | None = None
    early_clip: StepEvent | None = None
    scaled_clip: StepEvent | None = None
    window_clip: tuple[SourceLine | None, int, StepEvent] | None = None
    repeated: tuple[StepEvent, StepEvent] | None = None
    empty_clip: StepEvent | None = None
    unused_return: tuple[StepEvent, StepEvent] | None = None
    sums: Sums = field(default_factory=Sums)  # which backward calls each step applied
    stale: StepEvent | None = None  # the first hand-written update on stale gradients
    stale_steps: int = 0
    moved: dict[int, _Moved] = field(default_factory=dict)  # id(parameter) -> how
    cycles: dict[int, _Cycle] = field(default_factory=dict)  # optimizer id -> its cycle

    def read(self, events: Sequence[StepEvent]) -> None:
        """Advance over the events of ``events`` (oldest first) not read yet."""
        new: list[StepEvent] = []
        try:
            for event in reversed(events):  # only the tail is new: read it back to front
                if event.order <= self.seen:
                    break
                new.append(event)
        except RuntimeError:  # appended to meanwhile (a module freed in another thread)
            return  # read it at the next step, or at the end
        for event in reversed(new):
            self._advance(event)
            self.seen = event.order

    def _advance(self, event: StepEvent) -> None:
        window = self.window
        kind = event.kind
        self.sums.advance(event)
        if kind in ("backward", "grads"):
            window.filled = self.last_fill = event.order
            window.read = False
            window.backwards += kind == "backward"
            window.fills += 1
            for cycle in self.cycles.values():
                if cycle.backward is None and cycle.zero is not None:
                    cycle.backward = event.line
        elif kind == "grad_returned":
            window.returned = event
        elif kind == "read":
            window.read = True
            for cycle in self.cycles.values():
                cycle.read = cycle.read or cycle.backward is not None
        elif kind == "zero":
            # optimizer.zero_grad() says whether it dropped work none of its steps used;
            # p.grad = None (optimizer 0) is taken to have
            fresh = event.optimizer == 0 or event.grads > 0
            if fresh and window.filled >= 0 and not window.read and self.zeroed is None:
                self.zeroed = event
            if fresh:
                window.filled = -1
            if event.optimizer:
                self._cycle(event, fresh)
        elif kind == "scale":
            window.scaled = True
        elif kind == "unscale":
            window.scaled = False
        elif kind == "clip":
            self._clip(event)
        elif kind == "closure":
            window.filled = -1  # the optimizer used what the closure's backward filled
        elif kind == "step":
            self._step(event)
        elif kind == "stale":
            self.stale_steps += 1
            if self.stale is None:
                self.stale = event
        elif kind == "moved":
            self._moved(event)

    def _moved(self, event: StepEvent) -> None:
        cycle = self.cycles.get(event.optimizer)
        for key in event.params:
            before = self.moved.get(key)
            if before is None:
                self.moved[key] = _Moved(
                    event.origin, event.line, None, event.optimizer, 1, event.order
                )
                continue
            # a zero_grad() of this optimizer between two steps that moved the parameter
            # left its .grad in place: that call is what keeps it moving
            kept = cycle is not None and cycle.zeroed > before.order
            zero = cycle.zero if kept and cycle is not None else before.zero
            self.moved[key] = before._replace(zero=zero, steps=before.steps + 1, order=event.order)

    def _cycle(self, zero: StepEvent, fresh: bool) -> None:
        cycle = self.cycles.get(zero.optimizer)
        if cycle is None:
            if len(self.cycles) >= 16:
                return
            cycle = self.cycles[zero.optimizer] = _Cycle()
        if fresh and cycle.backward is not None and not cycle.read:
            cycle.wasted += 1
            if cycle.first is None:
                cycle.first = (cycle.backward, cycle.zero)
        cycle.zero, cycle.backward, cycle.read = zero.line, None, False
        cycle.zeroed = zero.order

    def _clip(self, event: StepEvent) -> None:
        window = self.window
        if event.given == 0 and self.empty_clip is None:
            self.empty_clip = event
        if window.filled < 0:
            if self.early_clip is None:
                self.early_clip = event
            return
        if window.scaled and self.scaled_clip is None:
            self.scaled_clip = event
        if event.grads and window.backwards:
            window.clips[event.line] = window.clips.get(event.line, 0) + 1

    def _step(self, step: StepEvent) -> None:
        window = self.window
        self.steps += 1
        if self.window_clip is None and not step.closure:
            repeated = [(line, n) for line, n in window.clips.items() if n > 1]
            if repeated:
                self.window_clip = (*repeated[0], step)
        before = self.last_step.get(step.optimizer)
        self.last_step[step.optimizer] = step
        if (
            self.repeated is None
            and before is not None
            and not step.closure
            and step.grads
            and self.last_fill < before.order
        ):
            self.repeated = (step, before)
        if (
            self.unused_return is None
            and window.returned is not None
            and window.fills == 0
            and not step.closure
            and not step.grads
        ):
            self.unused_return = (window.returned, step)
        self.window = _Window()

    # -- what the timeline shows ----------------------------------------------------------

    def findings(self, names: dict[int, str], made: Mapping[int, Any]) -> list[Finding]:
        found: list[Finding] = []
        if self.steps:  # without a training loop, none of these orders is anybody's bug
            found += _zeroed(self.zeroed.line) if self.zeroed else []
            found += _early_clip(self.early_clip) if self.early_clip else []
        found += _scaled_clip(self.scaled_clip) if self.scaled_clip else []
        found += _window_clip(*self.window_clip) if self.window_clip else []
        found += _repeated_step(*self.repeated) if self.repeated else []
        found += _empty_clip(self.empty_clip) if self.empty_clip else []
        found += _returned(*self.unused_return) if self.unused_return else []
        spilled = self.sums.findings()
        found += spilled
        if (
            not spilled and self.stale is not None and self.stale_steps >= 2
        ):  # one update on a sum is accumulation; two are a loop
            found += _stale(self.stale, self.stale_steps)
        found += _moved(self.moved, names, made)
        for optimizer, cycle in self.cycles.items():
            if optimizer not in self.last_step and cycle.wasted >= 2 and cycle.first:
                built = made.get(optimizer)
                found += _never_stepped(*cycle.first, built[1] if built else None, cycle.wasted)
                break
        return found


# -- the findings ---------------------------------------------------------------------------


def _zeroed(line: SourceLine | None) -> list[Finding]:
    return [
        make_finding(
            "GP110",
            message=(
                f"At {_where(line)} gradients were set to None after a backward() whose "
                "gradients no optimizer step had used yet: that backward's work is thrown "
                "away. If you accumulate over micro-batches, zero the gradients only right "
                "after optimizer.step()."
            ),
            locations=_locations((line, "cause")),
        )
    ]


def _early_clip(clip: StepEvent) -> list[Finding]:
    return [
        make_finding(
            "GP119",
            message=(
                f"Gradient clipping at {_where(clip.line)} ran when no backward() had produced "
                "gradients for the next optimizer step: it clipped stale or zeroed gradients, "
                "and the ones step() applies are not clipped at all. Clip between "
                "loss.backward() and optimizer.step()."
            ),
            locations=_locations((clip.line, "cause")),
        )
    ]


def _scaled_clip(clip: StepEvent) -> list[Finding]:
    return [
        make_finding(
            "GP127",
            message=(
                f"Gradient clipping at {_where(clip.line)} ran on gradients a GradScaler had "
                "multiplied by its loss scale (65536 at the start) and nobody unscaled: the "
                "norm it measures is the scaled one, so nearly every step is clipped to a "
                "tiny update (and clip_grad_value_ thresholds mean nothing). Call "
                "scaler.unscale_(optimizer) between backward() and the clipping."
            ),
            locations=_locations((clip.line, "cause")),
        )
    ]


def _window_clip(line: SourceLine | None, count: int, step: StepEvent) -> list[Finding]:
    return [
        make_finding(
            "GP142",
            message=(
                f"The gradients were clipped at {_where(line)} {count} times within "
                f"one accumulation window, once after each backward(), before the "
                f"step at {_where(step.line)} applied them: each clip scaled the "
                "partial sum, so the earlier micro-batches are shrunk again by every "
                "later clip. Clip once, right before optimizer.step()."
            ),
            locations=_locations((line, "cause"), (step.line, "read")),
            details={"clips_per_window": count},
        )
    ]


def _repeated_step(step: StepEvent, before: StepEvent) -> list[Finding]:
    return [
        make_finding(
            "GP143",
            message=(
                f"optimizer.step() at {_where(step.line)} ran with no backward() "
                f"since the same optimizer's step at {_where(before.line)}: it "
                "applied the gradients .grad still held (or zeros) once more, and "
                "momentum or Adam's moments moved the weights again."
            ),
            locations=_locations(
                (step.line, "cause"),
                (before.line if before.line != step.line else None, "read"),
            ),
            details={"parameters_with_grad": step.grads},
        )
    ]


def _empty_clip(clip: StepEvent) -> list[Finding]:
    return [
        make_finding(
            "GP144",
            message=(
                f"The gradient clipping at {_where(clip.line)} was given no "
                "parameters: the iterator it received (model.parameters(), a filter "
                "or generator) had already been consumed, so nothing was clipped and "
                "the norm it returned is 0. Build a list once and pass it to both the "
                "optimizer and the clipping."
            ),
            locations=_locations((clip.line, "cause")),
        )
    ]


def _returned(returned: StepEvent, step: StepEvent) -> list[Finding]:
    return [
        make_finding(
            "GP165",
            message=(
                f"optimizer.step() at {_where(step.line)} found no gradient in any of its "
                f"parameters: the gradients computed at {_where(returned.line)} by "
                "torch.autograd.grad were returned to the caller, and autograd.grad never "
                "writes .grad, so the step changed nothing. Assign them (p.grad = g) "
                "before step(), or call backward() instead."
            ),
            locations=_locations((returned.line, "cause"), (step.line, "read")),
        )
    ]


def _stale(first: StepEvent, count: int) -> list[Finding]:
    backward, step = first.origin, first.line
    return [
        make_finding(
            "GP134",
            message=(
                f"The gradients were not reset between optimizer steps: the backward at "
                f"{_where(backward)} added into gradients that the step at {_where(step)} had "
                f"already used, and {count} steps updated with gradients that still held "
                "earlier steps' (the sum of every gradient since the last reset). Call "
                "optimizer.zero_grad() before each backward (or right after step())."
            ),
            locations=_locations((backward, "cause"), (step, "read")),
            details={"steps": count},
        )
    ]


def _never_stepped(
    backward: SourceLine | None, zero: SourceLine | None, built: SourceLine | None, count: int
) -> list[Finding]:
    return [
        make_finding(
            "GP167",
            message=(
                f"The optimizer built at {_where(built)} never stepped: {count} times its "
                f"zero_grad() at {_where(zero)} cleared gradients that the backward at "
                f"{_where(backward)} had computed for its parameters, unused, so those "
                "parameters never change. Call its step() after that backward (before "
                "another backward adds into the same gradients)."
            ),
            locations=_locations((backward, "cause"), (zero, "read"), (built, "created")),
            details={"cycles_thrown_away": count},
        )
    ]


def _moved(
    moved: dict[int, _Moved], names: dict[int, str], made: Mapping[int, Any]
) -> list[Finding]:
    # one finding per line to change: parameters frozen at several lines but kept moving by
    # the same zero_grad() are one mistake
    groups: dict[tuple[SourceLine | None, ...], tuple[list[SourceLine | None], list[str]]] = {}
    for key, how in moved.items():
        built = made.get(how.optimizer)
        lines = (None if how.zero else how.frozen, how.step, how.zero, built[1] if built else None)
        frozen, params = groups.setdefault(lines, ([], []))
        if how.frozen not in frozen:
            frozen.append(how.frozen)
        params.append(names.get(key, "a parameter"))
    return [
        _frozen_moved(params, frozen, *lines[1:])
        for lines, (frozen, params) in list(groups.items())[:3]
    ]


def _frozen_moved(
    params: list[str],
    frozen: list[SourceLine | None],
    step: SourceLine | None,
    zero: SourceLine | None,
    built: SourceLine | None,
) -> Finding:
    listed = ", ".join(params[:4]) + (f" and {len(params) - 4} more" if len(params) > 4 else "")
    one = len(params) == 1
    pairs: tuple[tuple[SourceLine | None, LocationRole], ...]
    moved = (
        f"{listed} {'was' if one else 'were'} frozen at {_frozen_at(frozen)} "
        f"(requires_grad=False), but the optimizer step at {_where(step)} still changed "
        f"{'it' if one else 'them'}"
    )
    if zero is None:
        why = (
            ": the .grad left in place (zero_grad(set_to_none=False) keeps a zero tensor) is "
            "not None, so momentum, Adam's moments or weight decay still apply. Set the "
            "frozen parameters' .grad to None when freezing, or take them out of the optimizer."
        )
        pairs = ((frozen[0], "cause"), (step, "read"))
    else:
        why = (
            f": the optimizer built at {_where(built)} still holds "
            f"{'it' if one else 'them'}, and its zero_grad() at {_where(zero)} leaves a zero "
            ".grad instead of None (set_to_none=False), so every step applies momentum, "
            f"Adam's moments or weight decay to {'it' if one else 'them'}. Let zero_grad() set "
            "gradients to None (its default), or build the optimizer over the trainable parameters only."
        )
        pairs = ((zero, "cause"), (built, "cause"), (step, "read"))
    return make_finding(
        "GP111",
        message=moved + why,
        locations=_locations(*pairs),
        details={"parameters": params[:20]},
    )


def _frozen_at(lines: list[SourceLine | None]) -> str:
    if len(lines) == 1:
        return _where(lines[0])
    numbers = [str(line[1]) if line else "?" for line in lines]
    return f"lines {', '.join(numbers[:-1])} and {numbers[-1]}"
