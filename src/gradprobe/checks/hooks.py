"""Hooks: hooks that write to the gradient they are given, change its shape or type,
return the wrong number of gradients, or never see what their author expected (legacy
``register_backward_hook``, hooks on a module whose forward is bypassed)."""

from __future__ import annotations

from collections.abc import Iterable

from gradprobe._compat import HOOK_CHANGED_ERROR
from gradprobe._recorder import (
    Events,
    _return_line,
)
from gradprobe.checks._api import BackwardCall, Check, Run, register
from gradprobe.checks._common import _locations, _where, location
from gradprobe.findings import Finding, make_finding
from gradprobe.hooks._arity import wrong_arity
from gradprobe.hooks._inplace import hook_writes
from gradprobe.hooks._probe import HookProbe

__all__ = ["HookRegistrations", "HookResults", "HookWrites"]


@register
class HookWrites(Check):
    """A tensor hook wrote in place to the gradient it was given (GP309)."""

    name = "gradprobe.hooks.writes"
    codes = ("GP309",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        events = run.events
        if not events.hook_writes:
            return ()
        return hook_writes(events.hook_writes, events.tensor_hooks, location)


@register
class HookResults(Check):
    """A hook returned a gradient of another shape or type (GP307), or a full backward
    hook returned the wrong number of gradients (GP308)."""

    name = "gradprobe.hooks.results"
    codes = ("GP307", "GP308")

    def on_backward_error(self, call: BackwardCall) -> Iterable[Finding]:
        if call.error is None:
            return ()
        changed = _HOOK_CHANGED.search(str(call.error))
        if changed is not None:
            return _hook_changed(call.run.events, changed[1], changed[2])
        return wrong_arity(call.error, _return_line, location)


@register
class HookRegistrations(Check):
    """What registered hooks receive: legacy backward hooks (GP301, GP302), ``None``
    gradients (GP303), bypassed forwards (GP304), in-place outputs (GP305), dict outputs
    (GP306). Watches hook registration while recording (:class:`HookProbe`)."""

    name = "gradprobe.hooks.registrations"
    codes = ("GP301", "GP302", "GP303", "GP304", "GP305", "GP306", "GP310")

    def __init__(self) -> None:
        self.probe = HookProbe()

    def start(self, run: Run) -> None:
        self.probe.start()

    def stop(self) -> None:
        self.probe.stop()

    def conclude(self, run: Run) -> Iterable[Finding]:
        return self.probe.findings(run.error)


# -- analyses ---------------------------------------------------------------------------


def _hook_changed(events: Events, name: str, what: str) -> list[Finding]:
    registered, returns = events.tensor_hooks.get(name, (None, None))
    return [
        make_finding(
            "GP307",
            message=(
                f"The tensor hook {name!r}"
                + (f" registered at {_where(registered)}" if registered else "")
                + " returned"
                + (f" (at {_where(returns)})" if returns else "")
                + f" a gradient whose {what} differs from the one it was given, so"
                " backward() stopped. A hook may only replace the gradient with one "
                "like it; keep other results (a pooled map for Grad-CAM) in a variable."
            ),
            locations=_locations((returns, "cause"), (registered, "registered")),
            details={"hook": name, "changed": what},
        )
    ]


_HOOK_CHANGED = HOOK_CHANGED_ERROR
