"""Hooks: hooks that write to the gradient they are given, change its shape or type,
return the wrong number of gradients, or never see what their author expected (legacy
``register_backward_hook``, hooks on a module whose forward is bypassed)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import torch

from gradprobe._compat import HOOK_CHANGED_ERROR
from gradprobe._pictures import recorded_slice
from gradprobe._recorder import (
    Events,
    _return_line,
)
from gradprobe.checks._api import BackwardCall, Check, Run, register
from gradprobe.checks._common import _locations, _top_modules, _where, location
from gradprobe.findings import Finding, make_finding
from gradprobe.hooks._arity import wrong_arity
from gradprobe.hooks._inplace import hook_writes
from gradprobe.hooks._probe import HookProbe

__all__ = ["HookRegistrations", "HookResults", "HookWrites", "ParameterHooks", "StackedLeafHooks"]


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
class StackedLeafHooks(Check):
    """One line registering a tensor hook on the same parameter (or other leaf) again and
    again, the earlier ones still attached (GP310)."""

    name = "gradprobe.hooks.stacked_leaf_hooks"
    codes = ("GP310",)
    reads_modules = True  # to name the parameter

    def conclude(self, run: Run) -> Iterable[Finding]:
        stacked = list(run.events.stacked_hooks.values())[:3]
        if not stacked:
            return ()
        names = {id(p): name for name, p in _named_parameters(run.modules)}
        found: list[Finding] = []
        for line, hook, tensor, attached in stacked:
            what = f"the parameter {names[tensor]}" if tensor in names else "a leaf tensor"
            found.append(
                make_finding(
                    "GP310",
                    message=(
                        f"The tensor hook {hook!r} was registered on {what} at {_where(line)} "
                        f"again and again: {attached} of those registrations are attached to it "
                        "at once. A parameter (any leaf) outlives the forward pass that "
                        "registered the hook, so every call adds one more and all of them run: "
                        f"its gradient goes through the hook {attached} times and more with "
                        "every step. Register the hook once (in __init__), or keep the handle "
                        "and call handle.remove() after backward()."
                    ),
                    parameter=names.get(tensor),
                    locations=_locations((line, "cause")),
                    details={"hook": hook, "attached": attached},
                )
            )
        return found


def _named_parameters(modules: Iterable[torch.nn.Module]) -> list[tuple[str, torch.nn.Parameter]]:
    named: list[tuple[str, torch.nn.Parameter]] = []
    for top in _top_modules(modules):
        named.extend(top.named_parameters())
    return named


@register
class ParameterHooks(Check):
    """A post-accumulate-grad hook that uses its argument, the parameter, as the gradient
    (GP311)."""

    name = "gradprobe.hooks.parameter_hooks"
    codes = ("GP311",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return [
            make_finding(
                "GP311",
                message=(
                    "The hook registered with register_post_accumulate_grad_hook"
                    + (f" at {_where(registered)}" if registered else "")
                    + f" uses its argument's values at {_where(misuse)} as if it were the "
                    "gradient, and never reads its .grad: these hooks are called with the "
                    "parameter itself, so it works on the weights. Read param.grad inside "
                    "the hook."
                ),
                locations=_locations((misuse, "cause"), (registered, "registered")),
            )
            for misuse, registered in run.events.param_hooks[:1]
        ]


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
    codes = ("GP301", "GP302", "GP303", "GP304", "GP305", "GP306", "GP310", "GP312")

    def __init__(self) -> None:
        self.probe = HookProbe()

    def start(self, run: Run) -> None:
        self.probe.start()

    def stop(self) -> None:
        self.probe.stop()

    def conclude(self, run: Run) -> Iterable[Finding]:
        found = self.probe.findings(run.error)
        nodes = self.probe.legacy_nodes()
        return [_on_hooked_node(finding, run.events, nodes) for finding in found]


# -- analyses ---------------------------------------------------------------------------


def _on_hooked_node(finding: Finding, events: Events, nodes: dict[str, tuple[str, int]]) -> Finding:
    """A legacy backward hook's finding (GP301, GP302) with its picture: the node the
    hook is attached to, and what that node's grad_input holds."""
    key = nodes.get(finding.module or "") if finding.code in ("GP301", "GP302") else None
    if key is None:
        return finding
    labels = [str(slot.get("label")) for slot in finding.details.get("grad_input", ())]
    text = f"legacy backward hook {finding.details.get('hook')!r} is attached here" + (
        f", only the last op of {finding.module}" if finding.code == "GP302" else ""
    )
    if labels:
        text += f"; its grad_input = ({', '.join(labels)})"
    cause = finding.cause
    part = recorded_slice(events, [key], text, home=cause.file if cause else None)
    return replace(finding, graph_slice=part) if part is not None else finding


def _hook_changed(events: Events, name: str, what: str) -> list[Finding]:
    registered, returns, node = events.tensor_hooks.get(name, (None, None, None))
    found = make_finding(
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
    home = registered[0] if registered else None
    text = f"tensor hook {name!r} on this node's output returned a gradient of another {what}"
    part = recorded_slice(events, [node], text, home=home) if node is not None else None
    return [replace(found, graph_slice=part) if part is not None else found]


_HOOK_CHANGED = HOOK_CHANGED_ERROR
