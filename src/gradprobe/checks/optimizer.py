"""Optimizers and the parameters they hold: every parameter that learns is stepped by an
optimizer built after it (GP116). The order of the steps themselves is
:mod:`gradprobe.checks.protocol`'s."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import torch

from gradprobe._recorder import (
    Events,
    SourceLine,
)
from gradprobe.checks._api import Check, Run, register
from gradprobe.checks._common import _locations, _top_modules, _where, container_attribute
from gradprobe.findings import Finding, LocationRole, make_finding

__all__ = ["OptimizerCoverage"]


@register
class OptimizerCoverage(Check):
    """Parameters that learn but no optimizer steps, optimizers built too early (GP116)."""

    name = "gradprobe.optimizer.coverage"
    codes = ("GP116",)
    reads_modules = True

    def conclude(self, run: Run) -> Iterable[Finding]:
        return [
            *optimizer_coverage(
                run.events, list(run.modules), list(run.optimizers), dict(run.inside)
            ),
            *_forward_layers(run.events),
        ]


def _forward_layers(events: Events) -> list[Finding]:
    """GP116 for layers built inside a running forward, again at every call: each call
    makes a new layer with fresh random weights that no optimizer holds."""
    if not events.steps:
        return []
    found: list[Finding] = []
    for line, (count, kind, outer) in events.forward_layers.items():
        if count < 2 or line is None:
            continue
        found.append(
            make_finding(
                "GP116",
                message=(
                    f"A {kind} layer is built at {_where(line)}, inside {line[2]}() while "
                    f"{outer} ran, and called there: {count} calls built {count} new layers, "
                    "each with fresh random weights that no optimizer holds, so it never "
                    "trains (and its output changes at random from call to call). Build it "
                    "once in __init__ (self.proj = nn.Linear(...)) and call self.proj in "
                    "forward."
                ),
                module=kind,
                locations=_locations((line, "cause")),
                details={"built": count, "layer": kind},
            )
        )
    return found[:3]


# -- analyses ---------------------------------------------------------------------------


def optimizer_coverage(
    events: Events,
    modules: Sequence[torch.nn.Module],
    optimizers: Sequence[Any],
    inside: Mapping[int, torch.nn.Module | None],
) -> list[Finding]:
    """GP116: parameters that get gradients which no optimizer that stepped holds, because
    their module is not registered in the model that uses it (a plain list of layers) or
    was made after the optimizer collected the model's parameters (a replaced head)."""
    if not optimizers or not events.steps:
        return []
    held = {id(p) for opt in optimizers for group in opt.param_groups for p in group["params"]}
    made = [
        events.optimizer_lines[id(opt)] for opt in optimizers if id(opt) in events.optimizer_lines
    ]
    tops = _top_modules(modules)
    found: list[Finding] = []
    for module in modules:
        missed = [
            name
            for name, p in module.named_parameters(recurse=False)
            if p.requires_grad and p.grad is not None and id(p) not in held
        ]
        if not missed:
            continue
        kind = type(module).__name__
        line = events.module_lines.get(id(module))
        outer = inside.get(id(module))
        if outer is not None and not any(m is module for m in outer.modules()):
            message = (
                f"The {kind} made at {_where(line)} runs inside {type(outer).__name__} but is "
                "not registered in it (it is kept in a plain list, dict or other container "
                "nn.Module does not look into), so model.parameters() leaves out its "
                f"parameters ({', '.join(missed)}): they get gradients and no optimizer "
                "updates them. Hold it in nn.ModuleList / nn.ModuleDict, or assign it as an "
                "attribute."
            )
            pairs: list[tuple[SourceLine | None, LocationRole]] = [(line, "cause")]
            held_in = container_attribute(module, outer)
            if held_in is not None and held_in[1] is not None:
                message += (
                    f" It is held in {type(outer).__name__}.{held_in[0]}, a plain container "
                    f"assigned at {_where(held_in[1])}."
                )
                pairs = [(held_in[1], "cause"), (line, "created")]
        elif remade := _made_in_forward(events, module, missed):
            line = remade
            message = (
                f"{', '.join(missed)} of the {kind} {'are' if len(missed) > 1 else 'is'} "
                f"made at {_where(line)}, inside forward(), so no optimizer holds "
                f"{'them' if len(missed) > 1 else 'it'}: the gradients {'they get' if len(missed) > 1 else 'it gets'} "
                "are never applied (and when forward makes a new one on every call, the one "
                "the optimizer does hold no longer takes part). Create parameters once, in "
                "__init__, and only use them in forward (to reset values, write into the "
                "existing one under torch.no_grad())."
            )
            pairs = [(line, "cause")]
        elif (again := _built_again(events, module, optimizers, tops)) is not None:
            found.append(_built_again_finding(module, missed, *again))
            break
        else:
            order = events.module_orders.get(id(module))
            earlier = [m for m in made if order is not None and m[0] < order]
            orphaned = _orphans(events, optimizers, tops)
            if not earlier and orphaned:
                # the optimizer holds tensors the model no longer has: the model's
                # parameters were replaced after it collected them (.to() installing new
                # Parameter objects, a load that reassigns them)
                where = orphaned[0]
                message = (
                    f"{', '.join(missed)} of the {kind} made at {_where(line)} get gradients "
                    f"but no optimizer holds them: the optimizer built at {_where(where)} "
                    f"holds {len(orphaned[1])} tensors that are no longer in the model. Its "
                    "parameters were replaced by new Parameter objects after the optimizer "
                    "collected them (model.to(device) with parameters overwritten on "
                    "conversion, as on XLA; a reassignment), so the optimizer steps tensors "
                    "nothing uses. Build the optimizer after moving the model."
                )
                found.append(
                    make_finding(
                        "GP116",
                        message=message,
                        module=kind,
                        parameter=missed[0],
                        locations=_locations((where, "cause")),
                        details={"parameters": missed, "orphaned": len(orphaned[1])},
                    )
                )
                break
            in_trained = any(
                top is not module
                and any(m is module for m in top.modules())
                and any(id(p) in held for p in top.parameters())
                for top in tops
            )
            if not earlier:
                # built before the optimizer and left out: a choice (a fixed feature
                # extractor left requires_grad=True), not this bug. A learnable loss
                # module forgotten the same way (issue 25's corpus 506) looks alike from
                # here: telling them apart needs the data flow (consumer or producer of the
                # trained model's outputs), which is not recorded yet.
                continue
            if not in_trained:
                continue  # not part of a model the optimizer trains: a separate computation
            where = max(earlier)[1]
            message = (
                f"The {kind} made at {_where(line)} gets gradients ({', '.join(missed)}) but "
                f"the optimizer built at {_where(where)}, before it, does not hold its "
                "parameters: the layer was created or replaced after the optimizer collected "
                "model.parameters(), so it never trains. Build the optimizer after the model "
                "is final (or add_param_group the new parameters)."
            )
            # the line to change is the optimizer's (build it later, or add_param_group);
            # the layer is where the parameters it misses were made
            pairs = [(where, "cause"), (line, "created")]
        found.append(
            make_finding(
                "GP116",
                message=message,
                module=kind,
                parameter=missed[0],
                locations=_locations(*pairs),
                details={"parameters": missed},
            )
        )
    return found


def _built_again(
    events: Events,
    module: torch.nn.Module,
    optimizers: Sequence[Any],
    tops: Sequence[torch.nn.Module],
) -> tuple[torch.nn.Module, SourceLine | None, SourceLine | None] | None:
    """The model holding ``module``, where it was built, and where an optimizer was
    built before it over another instance of it: tensors shaped like all of this model's
    parameters, none of them the model's, none ever given a gradient (``model = Net()``
    written twice, the optimizer between the two)."""
    top = next((t for t in tops if any(m is module for m in t.modules())), None)
    if top is None:
        return None
    own = list(top.parameters())
    shapes = [tuple(p.shape) for p in own]
    order = events.module_orders.get(id(top))
    for opt in optimizers:
        made = events.optimizer_lines.get(id(opt))
        if made is None or order is None or made.order > order:
            continue
        params = [p for group in opt.param_groups for p in group["params"]]
        if (
            [tuple(p.shape) for p in params] == shapes
            and all(p.grad is None for p in params)
            and not {id(p) for p in params} & {id(p) for p in own}
            and not _stepped_gradients(events, opt)
        ):
            return top, events.module_sites.get(id(top)), made.line
    return None


def _stepped_gradients(events: Events, optimizer: Any) -> bool:
    """Whether a step of ``optimizer`` applied gradients (its parameters were trained, so
    a model built later is another model: a reference copy, a second experiment)."""
    return any(
        event.kind == "step" and event.optimizer == id(optimizer) and event.grads > 0
        for event in events.protocol
    )


def _built_again_finding(
    module: torch.nn.Module,
    missed: Sequence[str],
    top: torch.nn.Module,
    built: SourceLine | None,
    optimizer: SourceLine | None,
) -> Finding:
    kind = type(top).__name__
    message = (
        f"The {kind} trained here was built at {_where(built)}, after the optimizer built at "
        f"{_where(optimizer)}, which holds the parameters of another {kind} instance, made "
        "earlier and never used: backward fills the gradients of this model's parameters "
        f"({', '.join(missed)} of its {type(module).__name__}, and the rest) and no optimizer "
        "applies them, while the optimizer steps tensors nothing computes with."
    )
    return make_finding(
        "GP116",
        message=message,
        module=kind,
        parameter=missed[0],
        hint=(
            f"Build the {kind} once (remove the second instantiation), or build the "
            "optimizer after the model it trains."
        ),
        locations=_locations((built, "cause"), (optimizer, "created")),
        details={"parameters": list(missed), "how": "built again"},
    )


def _orphans(
    events: Events, optimizers: Sequence[Any], tops: Sequence[torch.nn.Module]
) -> tuple[SourceLine | None, list[int]] | None:
    """The first optimizer holding parameters that none of the models has any more, with
    its line and those tensors' ids."""
    alive = {id(p) for top in tops for p in top.parameters()}
    for opt in optimizers:
        gone = [
            id(p)
            for group in opt.param_groups
            for p in group["params"]
            if isinstance(p, torch.nn.Parameter) and id(p) not in alive
        ]
        unused = all(
            p.grad is None for group in opt.param_groups for p in group["params"] if id(p) in gone
        )
        # every tensor it holds is outside the models and nothing ever gave them a gradient
        if gone and unused and len(gone) == sum(len(g["params"]) for g in opt.param_groups):
            return events.optimizer_lines.get(id(opt), (0, None))[1], gone
    return None


def _made_in_forward(
    events: Events, module: torch.nn.Module, names: Sequence[str]
) -> SourceLine | None:
    """Where ``module``'s parameters ``names`` were made, when that was inside a forward."""
    for name in names:
        line = events.parameter_lines.get(id(getattr(module, name, None)))
        if line is not None and line[2] == "forward":
            return line
    return None
