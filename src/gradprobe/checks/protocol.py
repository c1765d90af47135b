"""The training-step protocol: the order of ``backward()``, gradient clipping and
``optimizer.step()`` calls, read as one timeline per run.

A step applies what the backward calls since the previous step accumulated; clipping
belongs between the last backward of a window and its step. From that model: clipping
repeated inside an accumulation window (GP142), a step with no backward since the same
optimizer's last step (GP143), clipping that was handed an exhausted iterator (GP144), a step on no gradient after
``torch.autograd.grad`` returned them (GP165).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gradprobe._recorder import SourceLine, StepEvent
from gradprobe.checks._api import Check, Run, register
from gradprobe.checks._common import _locations, _where
from gradprobe.findings import Finding, make_finding

__all__ = ["StepProtocol"]


@register
class StepProtocol(Check):
    """Clipping and stepping out of order with the backward calls (GP142-GP144, GP165)."""

    name = "gradprobe.protocol.step_order"
    codes = ("GP142", "GP143", "GP144", "GP165")

    def conclude(self, run: Run) -> Iterable[Finding]:
        timeline = list(run.events.protocol)
        return [
            *_window_clips(timeline),
            *_repeated_steps(timeline),
            *_empty_clips(timeline),
            *_returned_gradients(timeline),
        ]


def _windows(timeline: Sequence[StepEvent]) -> Iterable[tuple[list[StepEvent], StepEvent]]:
    """The events between one optimizer step and the next, with the step that ends them."""
    window: list[StepEvent] = []
    for event in timeline:
        if event.kind == "step":
            yield window, event
            window = []
        else:
            window.append(event)


def _window_clips(timeline: Sequence[StepEvent]) -> list[Finding]:
    """The same clipping line run after several backward calls of one window."""
    found: list[Finding] = []
    seen: set[SourceLine | None] = set()
    for window, step in _windows(timeline):
        clips: dict[SourceLine | None, int] = {}
        backwards_before = 0
        for event in window:
            if event.kind == "backward":
                backwards_before += 1
            elif event.kind == "clip" and event.grads and backwards_before:
                clips[event.line] = clips.get(event.line, 0) + 1
        for line, count in clips.items():
            if count < 2 or line in seen or step.closure:
                continue
            seen.add(line)
            found.append(
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
            )
    return found[:1]


def _repeated_steps(timeline: Sequence[StepEvent]) -> list[Finding]:
    """A step of an optimizer with no backward since its previous step."""
    last_step: dict[int, StepEvent] = {}
    last_backward = -1
    for event in timeline:
        if event.kind in ("backward", "grads"):  # a backward, or gradients set by hand
            last_backward = event.order
        elif event.kind == "step":
            before = last_step.get(event.optimizer)
            last_step[event.optimizer] = event
            if (
                before is not None
                and not event.closure
                and event.grads
                and last_backward < before.order
            ):
                return [
                    make_finding(
                        "GP143",
                        message=(
                            f"optimizer.step() at {_where(event.line)} ran with no backward() "
                            f"since the same optimizer's step at {_where(before.line)}: it "
                            "applied the gradients .grad still held (or zeros) once more, and "
                            "momentum or Adam's moments moved the weights again."
                        ),
                        locations=_locations(
                            (event.line, "cause"),
                            (before.line if before.line != event.line else None, "read"),
                        ),
                        details={"parameters_with_grad": event.grads},
                    )
                ]
    return []


def _empty_clips(timeline: Sequence[StepEvent]) -> list[Finding]:
    for event in timeline:
        if event.kind == "clip" and event.given == 0:
            return [
                make_finding(
                    "GP144",
                    message=(
                        f"The gradient clipping at {_where(event.line)} was given no "
                        "parameters: the iterator it received (model.parameters(), a filter "
                        "or generator) had already been consumed, so nothing was clipped and "
                        "the norm it returned is 0. Build a list once and pass it to both the "
                        "optimizer and the clipping."
                    ),
                    locations=_locations((event.line, "cause")),
                )
            ]
    return []


def _returned_gradients(timeline: Sequence[StepEvent]) -> list[Finding]:
    """A step that found no gradient in any parameter, after autograd.grad and no backward
    since the previous step: the gradients were returned, never stored in .grad."""
    returned: StepEvent | None = None
    for window, step in _windows(timeline):
        kinds = {event.kind for event in window}
        if "backward" in kinds or "grads" in kinds:
            continue
        returned = next((e for e in reversed(window) if e.kind == "grad_returned"), None)
        if returned is None or step.closure or step.grads:
            continue
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
    return []
