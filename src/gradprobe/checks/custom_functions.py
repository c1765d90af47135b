"""Custom ``autograd.Function`` s: a backward that returns None where a gradient is needed,
that never reads the gradient it is given, or a tensor kept on ``ctx`` written in place."""

from __future__ import annotations

from collections.abc import Iterable

from gradprobe._recorder import (
    Events,
)
from gradprobe.checks._api import Check, Run, register
from gradprobe.checks._common import _locations, _where
from gradprobe.findings import Finding, make_finding

__all__ = ["BlindBackward", "CtxWrites", "NoneGradients"]


@register
class NoneGradients(Check):
    """backward returned None for an input that needs a gradient (GP122)."""

    name = "gradprobe.custom_functions.none_gradients"
    codes = ("GP122",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _none_grads(run.events)


@register
class BlindBackward(Check):
    """backward never reads ``grad_output`` (GP128)."""

    name = "gradprobe.custom_functions.blind_backward"
    codes = ("GP128",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _blind_backwards(run.events)


@register
class CtxWrites(Check):
    """A tensor kept on ctx was written in place before backward read it (GP129)."""

    name = "gradprobe.custom_functions.ctx_writes"
    codes = ("GP129",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _ctx_writes(run.events)


# -- analyses ---------------------------------------------------------------------------


def _none_grads(events: Events) -> list[Finding]:
    return [
        make_finding(
            "GP122",
            message=(
                f"{name}.backward returned None for input"
                f"{'s' if len(missing) > 1 else ''} {', '.join(str(i) for i in missing)} of its "
                "forward"
                + (f" (at {_where(line)})" if line else "")
                + ", although "
                + ("they need" if len(missing) > 1 else "it needs")
                + " a gradient: autograd takes None as zero, so whatever is behind "
                + ("them" if len(missing) > 1 else "it")
                + " (a parameter) silently gets no gradient. Return the gradient for every "
                "input with ctx.needs_input_grad[i] True."
            ),
            node=f"{name}Backward",
            locations=_locations((line, "cause")),
            details={"function": name, "inputs": missing},
        )
        for name, missing, line in events.none_grads[:1]
    ]


def _blind_backwards(events: Events) -> list[Finding]:
    found = []
    for name, line, key, ones in events.blind_backwards[:3]:
        record = events.nodes.get(key)
        now = (
            "Here the gradient arriving was all ones, so this run's gradients are right by "
            "luck; weight, average or scale the output (a GradScaler, a loss weight) and "
            "they are wrong."
            if ones
            else "The gradient arriving here was not all ones, so every gradient behind "
            f"{name} is wrong, without an error."
        )
        found.append(
            make_finding(
                "GP128",
                message=(
                    f"{name}.backward never reads the gradient it is given, yet returned "
                    f"gradients (at {_where(line)}): it returns the local derivative of "
                    f"{name}.forward instead of grad_output times it. {now}"
                ),
                node=f"{name}Backward",
                locations=_locations(
                    (line, "cause"), (record.line if record is not None else None, "created")
                ),
                details={"function": name, "arrived_all_ones": ones},
            )
        )
    return found


def _ctx_writes(events: Events) -> list[Finding]:
    found = []
    seen: set[tuple[str, str]] = set()
    for kept in events.ctx_writes:
        name = kept.function
        if (name, kept.slot) in seen:
            continue
        seen.add((name, kept.slot))
        write = next(
            (w for w in events.writes if w.storage == kept.storage and w.order > kept.order),
            None,
        )
        where = f" by {write.op} at {_where(write.line)}" if write is not None else ""
        found.append(
            make_finding(
                "GP129",
                message=(
                    f"ctx.{kept.slot}, kept on the ctx of {name} "
                    + (f"at {_where(kept.stored)} " if kept.stored else "")
                    + f"instead of saved with ctx.save_for_backward, was modified in place"
                    f"{where} after {name}.apply"
                    + (f" at {_where(kept.line)}" if kept.line else "")
                    + f" and before its backward ran. Autograd checks versions only of "
                    f"tensors saved with save_for_backward, so {name}.backward silently used "
                    "the new values and its gradients are wrong."
                ),
                node=f"{name}Backward",
                locations=_locations(
                    (write.line if write is not None else None, "cause"),
                    (kept.stored, "saved"),
                    (kept.line, "created"),
                ),
                details={"function": name, "attribute": kept.slot},
            )
        )
    return found
