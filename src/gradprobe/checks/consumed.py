"""Invariant 2 of the training step: every gradient a backward produces is consumed (GP170).

At the end of a run, a parameter is *unconsumed* when backward filled its ``.grad``, no
optimizer that stepped holds it, no hook is attached to it, and the user's code did not read
its gradient inside the loop (a read after the last backward is a look at the result, not a
use). Two ways to get there are named, each by the line the user changes:

=============================  ===============================================================
how                            cause
=============================  ===============================================================
left out of the optimizer      where the optimizer was built, or the filter by module type
                               that collected its parameter list (``isinstance`` in a loop
                               over ``model.modules()``)
replaced after the optimizer   the assignment that replaced the Parameter with one of the
                               same shape (copy into it instead); for new shapes (a pruned
                               layer), the call that replaced it from the function that built
                               the optimizer (build it after that call)
=============================  ===============================================================

A module left out is named only when it is applied to values computed from the parameters
the optimizer trains (its forward input is downstream of them): a learnable loss module on
the model's features, a fusion weight between trained layers. A module applied to the data
itself (a fixed feature extractor left ``requires_grad=True``, the frozen front of a model
trained only at its head, a reference copy) is left alone: from the end of a run that is a
choice as often as a mistake. Nor is a set of modules left out whose parameters outnumber
all those the optimizers hold: a network larger than what is trained (a language model
under a tuned prompt) is one meant to stay fixed that still requires grad.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from gradprobe._recorder import Events, NodeKey, SourceLine
from gradprobe._recorder.events import Replaced
from gradprobe.checks._api import Check, Run, register
from gradprobe.checks._common import _locations, _top_modules, _where
from gradprobe.checks._filters import type_filter
from gradprobe.findings import Finding, LocationRole, make_finding

__all__ = ["UnconsumedGradients"]

_REPORTED = 3  # findings per run: one per module left out is plenty


@dataclass
class _Unconsumed:
    """A module whose own parameters got gradients nothing consumed."""

    module: torch.nn.Module
    names: list[str]
    params: list[torch.Tensor]
    made: SourceLine | None

    @property
    def ids(self) -> set[int]:
        return {id(p) for p in self.params}


@register
class UnconsumedGradients(Check):
    """Parameters whose gradients backward fills and nothing consumes (GP170)."""

    name = "gradprobe.consumed.gradients"
    codes = ("GP170",)
    reads_modules = True

    def conclude(self, run: Run) -> Iterable[Finding]:
        events = run.events
        optimizers = list(run.optimizers)
        if not optimizers or not events.steps:
            return []  # nothing trains: an analysis script reads gradients its own way
        held = [_held(opt) for opt in optimizers]
        everything = set().union(*held)
        found: list[Finding] = []
        causes: set[tuple[str, int]] = set()
        items = _unconsumed(events, run.modules, everything)
        # a network larger than all that is trained, left out, is one meant to stay fixed
        # (a pretrained language model under a tuned prompt, a perceptual-loss network)
        fixed = _size(p for item in items for p in item.params) > _size(
            p for opt in optimizers for group in opt.param_groups for p in group["params"]
        )
        for item in items:
            finding = _replaced(events, item, optimizers, held, run.modules)
            if finding is None and not fixed:
                finding = _left_out(events, item, optimizers, held)
            cause = _cause(finding)
            if finding is not None and cause not in causes:
                causes.add(cause)  # two layers one call replaced: one line to change
                found.append(finding)
        return found[:_REPORTED]


def _cause(finding: Finding | None) -> tuple[str, int]:
    for loc in finding.locations if finding is not None else ():
        if loc.role == "cause":
            return (loc.file, loc.line)
    return ("", 0)


def _size(tensors: Iterable[torch.Tensor]) -> int:
    return sum(t.numel() for t in tensors if isinstance(t, torch.Tensor))


def _held(optimizer: Any) -> set[int]:
    return {id(p) for group in optimizer.param_groups for p in group["params"]}


def _unconsumed(
    events: Events, modules: Sequence[torch.nn.Module], held: set[int]
) -> list[_Unconsumed]:
    found: list[_Unconsumed] = []
    for module in modules:
        names = [
            name
            for name, p in module.named_parameters(recurse=False)
            if id(p) not in held and _wasted(events, p)
        ]
        if names:
            params = [getattr(module, name) for name in names]
            # where its first parameter was made says more than the module's super().__init__
            made = events.parameter_lines.get(id(params[0])) or events.module_lines.get(id(module))
            found.append(_Unconsumed(module, names, params, made))
    return found


def _wasted(events: Events, p: torch.Tensor) -> bool:
    """``p`` got a gradient that nothing used: no hook on it, no read of it by the user's
    code with a backward after the read."""
    if not p.requires_grad or p.grad is None:
        return False
    if p._backward_hooks or getattr(p, "_post_accumulate_grad_hooks", None):
        return False
    read = events.leaf_grad_reads.get(id(p))
    return read is None or read >= events.last_backward


# -- replaced after the optimizer collected the parameters ------------------------------


def _replaced(
    events: Events,
    item: _Unconsumed,
    optimizers: Sequence[Any],
    held: Sequence[set[int]],
    modules: Sequence[torch.nn.Module],
) -> Finding | None:
    for change in reversed(events.replaced):
        if not _replaces(change, item, modules):
            continue
        for optimizer, ids in zip(optimizers, held, strict=True):
            made = events.optimizer_lines.get(id(optimizer))
            if made is None or made.order > change.order or not ids & set(change.old):
                continue
            return _replaced_finding(events, item, change, made.line)
    return None


def _replaces(change: Replaced, item: _Unconsumed, modules: Sequence[torch.nn.Module]) -> bool:
    """Whether ``change`` put ``item``'s parameters in place: the Parameter itself, or a
    module that is ``item.module`` or holds it."""
    if change.kind == "parameter":
        return change.new in item.ids
    for top in _top_modules(modules):
        for inner in top.modules():
            if id(inner) == change.new:
                return any(m is item.module for m in inner.modules())
    return False


def _replaced_finding(
    events: Events, item: _Unconsumed, change: Replaced, optimizer: SourceLine | None
) -> Finding:
    kind = type(item.module).__name__
    what = f"the {change.kind} {change.name}"
    if change.kind == "parameter" and change.same_shapes:
        cause = change.stack[0] if change.stack else None
        fix = (
            "Copy the new values into the existing Parameter (with torch.no_grad(): "
            f"module.{change.name}.copy_(new_values)) instead of assigning a new one."
        )
    else:
        cause = _in_function_of(change.stack, optimizer)
        fix = (
            "Build the optimizer after this change (or add_param_group the new "
            "parameters); their shapes differ from the old ones', so copying them in "
            "is no option."
        )
    message = (
        f"{what[0].upper()}{what[1:]} was replaced at {_where(cause)}, after the optimizer "
        f"built at {_where(optimizer)} had collected the old one: the new "
        f"{_plural(len(item.names), 'parameter')} of the {kind} ({', '.join(item.names)}) "
        "get gradients at every backward and no optimizer holds them, while the optimizer "
        "steps tensors nothing uses any more."
    )
    pairs: list[tuple[SourceLine | None, LocationRole]] = [
        (cause, "cause"),
        (item.made, "created"),
        (optimizer, "created"),
    ]
    return make_finding(
        "GP170",
        message=message,
        module=kind,
        parameter=item.names[0],
        hint=fix,
        locations=_locations(*pairs),
        details={"parameters": item.names, "replaced": change.name, "how": "replaced"},
    )


def _in_function_of(stack: Sequence[SourceLine], optimizer: SourceLine | None) -> SourceLine | None:
    """The line of ``stack`` in the function that built the optimizer (the call to move
    before it), else the assignment itself."""
    if optimizer is not None:
        for line in stack:
            if line[0] == optimizer[0] and line[2] == optimizer[2] and line[1] > optimizer[1]:
                return line
    return stack[0] if stack else None


# -- left out of the optimizer --------------------------------------------------------------


def _left_out(
    events: Events, item: _Unconsumed, optimizers: Sequence[Any], held: Sequence[set[int]]
) -> Finding | None:
    inputs = events.module_inputs.get(id(item.module))
    order = events.module_orders.get(id(item.module))
    if not inputs or order is None or item.made is None:
        return None  # applied to data, or not seen made: nothing says it was meant to learn
    for optimizer, ids in zip(optimizers, held, strict=True):
        made = events.optimizer_lines.get(id(optimizer))
        if made is None or made.order < order:
            continue  # a module made after the optimizer is GP116's
        if _downstream(events, ids, inputs):
            return _left_out_finding(item, made.line)
    return None


def _downstream(events: Events, held: set[int], inputs: Sequence[NodeKey]) -> bool:
    """Whether a node of ``inputs`` was computed from a parameter in ``held``: a walk up the
    recorded graph from the first node each of them was used in."""
    starts = [events.first_use[i] for i in held if i in events.first_use]
    wanted = set(inputs)
    seen = set(starts)
    queue = deque(starts)
    while queue:
        key = queue.popleft()
        if key in wanted:
            return True
        record = events.nodes.get(key)
        if record is None:
            continue
        for consumer in record.consumers:
            if consumer not in seen:
                seen.add(consumer)
                queue.append(consumer)
    return False


def _left_out_finding(item: _Unconsumed, optimizer: SourceLine | None) -> Finding:
    kind = type(item.module).__name__
    names = ", ".join(item.names)
    filtered = type_filter(optimizer) if optimizer is not None else None
    if filtered is not None:
        how = (
            f"the parameter list it was given is collected by module type at "
            f"{_where(filtered)}, which leaves the {kind}'s own parameters out"
        )
        hint = (
            "Collect every parameter (model.parameters(), or named_parameters() split "
            "into groups), so that a module's own Parameters are not skipped."
        )
        pairs: list[tuple[SourceLine | None, LocationRole]] = [
            (filtered, "cause"),
            (optimizer, "created"),
            (item.made, "created"),
        ]
    else:
        how = "it was not given them"
        hint = (
            f"Give the {kind}'s parameters to the optimizer ([*model.parameters(), "
            "*criterion.parameters()], or a param group of their own)."
        )
        pairs = [(optimizer, "cause"), (item.made, "created")]
    message = (
        f"The {kind} made at {_where(item.made)} is applied to values computed from the "
        f"parameters the optimizer built at {_where(optimizer)} trains, and backward fills "
        f"the gradients of its own {_plural(len(item.names), 'parameter')} ({names}), but "
        f"that optimizer does not hold them ({how}), no other does, and nothing reads "
        "them: they pile up and never change the parameters, which stay as they were made."
    )
    return make_finding(
        "GP170",
        message=message,
        module=kind,
        parameter=item.names[0],
        hint=hint,
        locations=_locations(*pairs),
        details={"parameters": item.names, "how": "filtered" if filtered else "left out"},
    )


def _plural(count: int, noun: str) -> str:
    return noun if count == 1 else f"{noun}s"
