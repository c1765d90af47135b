"""Parameters: how they are made, frozen, loaded and tied."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from dataclasses import replace

import torch

from gradprobe._compat import DEVICE_MISMATCH, DTYPE_MISMATCH
from gradprobe._pictures import leaf_slice
from gradprobe._recorder import (
    Events,
    SourceLine,
    _storage,
)
from gradprobe._source import traceback_location
from gradprobe.checks._api import Check, Run, register
from gradprobe.checks._common import (
    _locations,
    _top_modules,
    _where,
    attribute_line,
    container_attribute,
    location,
)
from gradprobe.errors import error_text
from gradprobe.findings import Finding, make_finding
from gradprobe.graph import GraphSlice

__all__ = ["CopiedTies", "EmptyLoads", "FreezeTypos"]


@register
class UnregisteredModules(Check):
    """A dtype or device mismatch raised in a module its model never registered (GP145)."""

    name = "gradprobe.parameters.unregistered_modules"
    codes = ("GP145",)

    def on_error(self, run: Run, found: Sequence[Finding]) -> Iterable[Finding]:
        error = run.error
        if not isinstance(error, RuntimeError):
            return ()
        text = error_text(error)
        if DEVICE_MISMATCH not in text and not DTYPE_MISMATCH.search(text):
            return ()
        for module in run.modules:
            outer = run.inside.get(id(module))
            if outer is None or any(m is module for m in outer.modules()):
                continue
            held = container_attribute(module, outer)
            if held is None or held[1] is None:
                continue
            kind = type(module).__name__
            made = run.events.module_lines.get(id(module))
            return (
                make_finding(
                    "GP145",
                    message=(
                        f"The {kind} made at {_where(made)} runs inside "
                        f"{type(outer).__name__} but is held in {type(outer).__name__}."
                        f"{held[0]}, a plain container assigned at {_where(held[1])}, so the "
                        f"model does not know it: .to()/.double() did not convert it, which is "
                        f"why the script failed ({text.splitlines()[0]}). Hold it in "
                        "nn.ModuleList or nn.ModuleDict."
                    ),
                    locations=[
                        *_locations((held[1], "cause"), (made, "created")),
                        *(
                            loc
                            for loc in (traceback_location(error.__traceback__),)
                            if loc is not None
                        ),
                    ],
                    details={"attribute": held[0], "module": kind},
                ),
            )
        return ()


@register
class TensorAttributes(Check):
    """A module attribute that is a tensor requiring grad, not a Parameter, or a plain
    list, tuple or dict of Parameters, that no optimizer holds (GP146)."""

    name = "gradprobe.parameters.tensor_attributes"
    codes = ("GP146",)
    reads_modules = True

    def conclude(self, run: Run) -> Iterable[Finding]:
        if not run.optimizers or not run.events.steps:
            return ()
        held = {id(p) for opt in run.optimizers for g in opt.param_groups for p in g["params"]}
        found: list[Finding] = []
        for top in _top_modules(run.modules):
            for prefix, module in top.named_modules():
                found.extend(_hidden_parameters(module, prefix, held))
                for attr, value in vars(module).items():
                    if (
                        type(value) is not torch.Tensor
                        or not value.requires_grad
                        or value.grad_fn is not None
                        or id(value) in held
                    ):
                        continue
                    line = attribute_line(module, attr)
                    name = f"{prefix}.{attr}" if prefix else attr
                    found.append(
                        make_finding(
                            "GP146",
                            message=(
                                f"{name} is a tensor that requires grad, kept on "
                                f"{type(module).__name__} as a plain attribute"
                                + (f" (at {_where(line)})" if line else "")
                                + ", not an nn.Parameter: model.parameters() leaves it out and "
                                "no optimizer updates it"
                                + (
                                    " (its .grad fills up and nothing applies it)"
                                    if value.grad is not None
                                    else ""
                                )
                                + ". Wrap it in nn.Parameter(...)."
                            ),
                            tensor=name,
                            locations=_locations((line, "cause")),
                        )
                    )
        return found[:3]


# the attributes every nn.Module has (_parameters, _modules, ...): registered, not hidden
_MODULE_ATTRIBUTES = frozenset(vars(torch.nn.Module()))


def _hidden_parameters(module: torch.nn.Module, prefix: str, held: set[int]) -> Iterable[Finding]:
    """GP146 for nn.Parameters kept in a plain list, tuple or dict attribute of ``module``
    (``self.gains = [nn.Parameter(...) for ...]``) that got gradients no optimizer holds:
    nn.Module registers none of them."""
    for attr, value in vars(module).items():
        if attr in _MODULE_ATTRIBUTES or not isinstance(value, list | tuple | dict):
            continue
        items = value.values() if isinstance(value, dict) else value
        hidden = [
            p
            for p in items
            if isinstance(p, torch.nn.Parameter)
            and p.requires_grad
            and p.grad is not None
            and id(p) not in held
        ]
        if not hidden:
            continue
        line = attribute_line(module, attr)
        name = f"{prefix}.{attr}" if prefix else attr
        kind = "dict" if isinstance(value, dict) else type(value).__name__
        yield make_finding(
            "GP146",
            message=(
                f"{name} is a plain {kind} of {_count(len(hidden), 'nn.Parameter')}, kept "
                f"on {type(module).__name__}"
                + (f" (assigned at {_where(line)})" if line else "")
                + ": nn.Module registers no Parameter inside a list, tuple or dict, so "
                "model.parameters() leaves them out and no optimizer holds them. Backward "
                "fills their gradients at every step and nothing applies them."
            ),
            hint=(
                "Hold them in nn.ParameterList([...]) (nn.ParameterDict for a dict), so "
                "the module registers them and model.parameters() returns them."
            ),
            tensor=name,
            locations=_locations((line, "cause")),
            details={"attribute": name, "parameters": len(hidden), "container": kind},
        )


def _count(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


@register
class BrokenTies(Check):
    """A parameter tied by assignment, replaced on one side only (GP148)."""

    name = "gradprobe.parameters.broken_ties"
    codes = ("GP148",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return [
            make_finding(
                "GP148",
                message=(
                    f"At {_where(line)} {kind}.{name} got a new Parameter, but the one it "
                    f"replaces is still held by {other}.{other_name}: the two were tied and "
                    f"are not any more. {other}.{other_name} keeps training the old tensor. "
                    "Copy the new values into the shared parameter in place (with "
                    f"torch.no_grad(): {name}.copy_(...)), or tie again after this line."
                ),
                locations=_locations((line, "cause")),
                details={"attribute": name, "still_held_by": f"{other}.{other_name}"},
            )
            for line, name, other, other_name, kind in run.events.broken_ties[:1]
        ]


@register
class FreezeTypos(Check):
    """Freezing that does nothing: an attribute typo (``requires_gard``) or
    ``requires_grad = False`` set on a copy of the parameter (GP111)."""

    name = "gradprobe.parameters.freeze_typos"
    codes = ("GP111",)
    reads_modules = True

    def conclude(self, run: Run) -> Iterable[Finding]:
        modules = list(run.modules)
        return [*_typos(run.events, modules), *copy_freezes(run.events, modules)]


@register
class EmptyLoads(Check):
    """``load_state_dict(strict=False)`` that matched no key (GP117)."""

    name = "gradprobe.parameters.empty_loads"
    codes = ("GP117",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return empty_loads(run.events)


@register
class CopiedTies(Check):
    """Weight tying done with ``nn.Parameter(other.clone())`` (GP130)."""

    name = "gradprobe.parameters.copied_ties"
    codes = ("GP130",)
    reads_modules = True

    def conclude(self, run: Run) -> Iterable[Finding]:
        return copied_ties(run.events, list(run.modules))


# -- analyses ---------------------------------------------------------------------------


def _typos(events: Events, modules: Sequence[torch.nn.Module]) -> list[Finding]:
    found = []
    for line, name, meant, storage in events.typos[:1]:
        finding = make_finding(
            "GP111",
            message=(
                f"At {_where(line)} the attribute {name!r} was set on a tensor; tensors have "
                f"no such setting, so this only added a new Python attribute. You meant "
                f"{meant!r}: the parameter still requires grad and keeps training."
            ),
            locations=_locations((line, "cause")),
            details={"attribute": name, "meant": meant},
        )
        found.append(replace(finding, graph_slice=_still_training(storage, modules, finding)))
    return found


def _still_training(
    storage: int, modules: Sequence[torch.nn.Module], finding: Finding
) -> GraphSlice | None:
    """The parameter a freeze missed, drawn as the leaf that still gets a gradient."""
    if not storage:
        return None
    for top in _top_modules(modules):
        for name, param in top.named_parameters():
            if _storage(param) == storage and param.requires_grad:
                cause = finding.cause
                how = f"{finding.details['attribute']} = ..." if finding.details else "a freeze"
                at = f" at line {cause.line}" if cause is not None else ""
                return leaf_slice(
                    name,
                    f"still requires grad and trains: {how}{at} froze nothing",
                    shape=tuple(param.shape),
                    dtype=str(param.dtype).removeprefix("torch."),
                    device=str(param.device),
                )
    return None


def copy_freezes(events: Events, modules: Sequence[torch.nn.Module]) -> list[Finding]:
    """GP111 for ``requires_grad = False`` set on a copy of a parameter (``state_dict()``
    values are detached tensors sharing its memory) while the parameter still trains."""
    if not events.copy_freezes:
        return []
    params: dict[int, tuple[str, torch.nn.Parameter]] = {}
    for top in _top_modules(modules):
        for name, param in top.named_parameters():
            params.setdefault(_storage(param), (name, param))
    hits = [
        (line, params[storage][0])
        for line, storage in events.copy_freezes
        if storage in params and params[storage][1].requires_grad
    ]
    if not hits:
        return []
    line = hits[0][0]
    names = [name for where, name in hits if where == line]
    return [
        make_finding(
            "GP111",
            message=(
                f"At {_where(line)} requires_grad was set to False on a tensor that shares "
                f"memory with {', '.join(names[:4])}{' ...' if len(names) > 4 else ''} but is "
                "not the parameter (state_dict() returns detached copies): the parameter "
                "itself still requires grad and keeps training. Freeze the module's own "
                "parameters: for p in model.backbone.parameters(): p.requires_grad_(False)."
            ),
            parameter=names[0],
            locations=_locations((line, "cause")),
            details={"parameters": names},
        )
    ]


def empty_loads(events: Events) -> list[Finding]:
    """GP117 for ``load_state_dict(..., strict=False)`` calls that loaded nothing."""
    found: list[Finding] = []
    for line, unexpected, missing in events.empty_loads[:1]:
        prefix = _common_prefix(unexpected, missing)
        found.append(
            make_finding(
                "GP117",
                message=(
                    f"load_state_dict(strict=False) at {_where(line)} loaded none of its "
                    f"{len(unexpected)} keys: none matches a name in the model"
                    + (
                        f" (the checkpoint's keys start with {prefix!r}, which the model's "
                        "names do not have: it was saved from a DistributedDataParallel or "
                        "DataParallel wrapper)"
                        if prefix
                        else f" (for example {unexpected[0]!r})"
                    )
                    + ". The model keeps its initial weights, and code that selects "
                    "parameters by those keys (to freeze them) matches nothing. Strip the "
                    "prefix ({k.removeprefix('module.'): v for k, v in state.items()}) and "
                    "check the result's missing_keys/unexpected_keys."
                ),
                locations=_locations((line, "cause")),
                details={"unexpected_keys": unexpected[:20], "prefix": prefix},
            )
        )
    return found


def _common_prefix(unexpected: Sequence[str], missing: Sequence[str]) -> str | None:
    for prefix in ("module.", "_orig_mod.", "model."):
        if all(key.startswith(prefix) for key in unexpected):
            stripped = {key[len(prefix) :] for key in unexpected}
            if not missing or stripped & set(missing):
                return prefix
    return None


def copied_ties(events: Events, modules: Sequence[torch.nn.Module]) -> list[Finding]:
    """GP130 for parameters cloned from another parameter of the same model that an
    optimizer then trained apart from it."""
    if not events.parameter_copies:
        return []
    found: list[Finding] = []
    for top in _top_modules(modules):
        named = {id(p): (n, p) for n, p in top.named_parameters(remove_duplicate=False)}
        for line, source_id, copy_id in events.parameter_copies:
            if source_id not in named or copy_id not in named:
                continue  # built from another model's weights: a transfer, not a tie
            (source_name, source), (copy_name, copy) = named[source_id], named[copy_id]
            if source is copy or source.shape != copy.shape:
                continue
            if not {source_id, copy_id} <= events.fed:
                continue  # one side frozen or never stepped: a reference copy (EMA, target)
            with torch.no_grad():
                if torch.equal(source, copy):
                    continue  # still equal: nothing went wrong in this run
            found.append(_finding(line, source_name, copy_name))
    return found[:3]


def _finding(line: SourceLine | None, source: str, copy: str) -> Finding:
    where = f"line {line[1]}" if line else "an unknown line"
    cause = location(line, "cause")
    target, original = _spelled(cause.text if cause else None) or (copy, source)
    return make_finding(
        "GP130",
        message=(
            f"{copy} was made at {where} as a copy of {source} (nn.Parameter of a .clone()): "
            "they are two parameters, each with its own gradient, and the optimizer has "
            "moved them apart, so they are no longer tied. To tie them, assign the "
            f"parameter itself ({target} = {original}); to keep two independent copies, "
            "build the new one from .detach().clone()."
        ),
        parameter=copy,
        locations=[cause] if cause else [],
        details={"parameter": copy, "copy_of": source},
    )


def _spelled(text: str | None) -> tuple[str, str] | None:
    """``("self.out.weight", "self.embed.weight")`` for the line
    ``self.out.weight = nn.Parameter(self.embed.weight.clone())``: the user's own words."""
    try:
        tree = ast.parse(text or "")
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        for call in ast.walk(node.value):
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr == "clone"
            ):
                return ast.unparse(node.targets[0]), ast.unparse(call.func.value)
    return None
