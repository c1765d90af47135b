"""What ``watch()`` watches: its arguments checked, the modules and parameters it hooks.

Everything here runs once, when a session opens, except :func:`find_tensors`, which the
forward hooks use to find the tensors inside a module's input or output. No state.
"""

from __future__ import annotations

import fnmatch
import inspect
import linecache
from collections.abc import Iterator, Mapping, Sequence
from typing import Literal, TypeAlias

import torch
from torch import Tensor, nn

from gradprobe._source import is_user_file, shown_file
from gradprobe._watch._findings import Thresholds
from gradprobe.errors import GradprobeTypeError, GradprobeValueError, describe
from gradprobe.findings import Location

__all__ = [
    "PASS_THROUGH",
    "RELU_TYPES",
    "ModuleSelector",
    "StepOn",
    "check_options",
    "check_thresholds",
    "find_tensors",
    "forward_sources",
    "parameters",
    "select",
    "unwrap",
]

StepOn: TypeAlias = Literal["forward", "optimizer", "manual"]
ModuleSelector: TypeAlias = "str | type[nn.Module]"

_STEP_ON = ("forward", "optimizer", "manual")

RELU_TYPES: tuple[type[nn.Module], ...] = (nn.ReLU, nn.ReLU6)
# Modules whose output (and whose input's gradient) cannot turn non-finite when what comes
# in is finite: between sampled steps their outputs need no NaN/Inf check of their own, a
# NaN there comes from upstream and is caught there or at the next module. The gradient
# flowing into their output is still checked: a NaN from the loss is first seen there.
PASS_THROUGH: tuple[type[nn.Module], ...] = (
    nn.ReLU,
    nn.ReLU6,
    nn.LeakyReLU,
    nn.Hardtanh,
    nn.Sigmoid,
    nn.Tanh,
    nn.Dropout,
    nn.Dropout1d,
    nn.Dropout2d,
    nn.Dropout3d,
    nn.Identity,
    nn.MaxPool1d,
    nn.MaxPool2d,
    nn.MaxPool3d,
    nn.Flatten,
)
_MAX_DEPTH = 4  # how deep to look for tensors inside returned tuples/lists/dicts


def find_tensors(value: object, path: str, depth: int) -> Iterator[tuple[str, Tensor]]:
    """``(path, tensor)`` for the tensors in ``value``, nested up to :data:`_MAX_DEPTH`."""
    if isinstance(value, Tensor):
        yield path, value
    elif depth < _MAX_DEPTH:
        if isinstance(value, (tuple, list)):
            for i, item in enumerate(value):
                yield from find_tensors(item, f"{path}[{i}]", depth + 1)
        elif isinstance(value, Mapping):
            for key, item in value.items():
                yield from find_tensors(item, f"{path}[{key!r}]", depth + 1)


def unwrap(model: nn.Module) -> nn.Module:
    inner = getattr(model, "_orig_mod", None)
    if isinstance(inner, nn.Module) and type(model).__name__ == "OptimizedModule":
        return inner
    return model


def check_options(
    model: object, optimizer: object, sample_every: object, history: object, step_on: object
) -> None:
    if not isinstance(model, nn.Module):
        msg = f"watch() needs an nn.Module to watch, got {describe(model)}."
        raise GradprobeTypeError(msg)
    if isinstance(model, torch.jit.ScriptModule):
        msg = (
            f"watch() cannot hook a TorchScript module ({type(model).__name__}): scripted "
            "modules refuse Python hooks. Watch the eager model before torch.jit.script, or "
            "a plain nn.Module that contains the scripted part."
        )
        raise GradprobeTypeError(msg)
    if isinstance(optimizer, type):
        msg = (
            f"watch(optimizer=...) needs an optimizer instance, got the class "
            f"{optimizer.__module__}.{optimizer.__qualname__}; create it first: "
            f"optimizer={optimizer.__name__}(model.parameters(), lr=...)."
        )
        raise GradprobeTypeError(msg)
    if optimizer is not None and not callable(getattr(optimizer, "register_step_post_hook", None)):
        msg = (
            f"watch(optimizer=...) needs a torch.optim.Optimizer (for update ratios), got "
            f"{describe(optimizer)}."
        )
        raise GradprobeTypeError(msg)
    for name, value in (("sample_every", sample_every), ("history", history)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            msg = f"watch({name}=...) must be a positive int, got {describe(value)}."
            raise GradprobeValueError(msg)
    if step_on not in _STEP_ON:
        msg = (
            f"watch(step_on=...) must be one of {', '.join(map(repr, _STEP_ON))}, got {step_on!r}."
        )
        raise GradprobeValueError(msg)
    if step_on == "optimizer" and optimizer is None:
        msg = "watch(step_on='optimizer') counts optimizer.step() calls: pass optimizer=... too."
        raise GradprobeValueError(msg)


def check_thresholds(exploding: object, vanishing: object, dead_relu: object) -> Thresholds:
    for name, value in (("exploding", exploding), ("vanishing", vanishing)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            msg = f"watch({name}=...) must be a positive number (a gradient norm), got {describe(value)}."
            raise GradprobeValueError(msg)
    assert isinstance(exploding, (int, float)) and isinstance(vanishing, (int, float))
    if vanishing >= exploding:
        msg = f"watch(vanishing={vanishing!r}) must be below exploding={exploding!r}."
        raise GradprobeValueError(msg)
    if (
        isinstance(dead_relu, bool)
        or not isinstance(dead_relu, (int, float))
        or not 0 < dead_relu <= 1
    ):
        msg = f"watch(dead_relu=...) is a fraction of units in (0, 1], got {describe(dead_relu)}."
        raise GradprobeValueError(msg)
    return Thresholds(float(exploding), float(vanishing), float(dead_relu))


def select(
    root: nn.Module, modules: ModuleSelector | Sequence[ModuleSelector] | None
) -> list[tuple[str, nn.Module]]:
    # TorchScript modules refuse Python hooks: the eager modules around them are watched.
    named = [
        (name, module)
        for name, module in root.named_modules()
        if not isinstance(module, torch.jit.ScriptModule)
    ]
    if modules is None:
        return [
            (name, module)
            for name, module in named
            if next(module.children(), None) is None
            or any(p is not None for p in module._parameters.values())
        ]
    given: object = modules  # users pass anything; the check is real
    if not isinstance(given, (str, type, Sequence, set, frozenset)):
        msg = (
            f"watch(modules=...) takes a glob pattern on module names, an nn.Module subclass, "
            f"or a list of them, got {describe(modules)}; e.g. modules=['layer1.*', nn.ReLU]."
        )
        raise GradprobeTypeError(msg)
    selectors: list[object] = [modules] if isinstance(modules, (str, type)) else list(modules)
    for selector in selectors:
        is_type = isinstance(selector, type) and issubclass(selector, nn.Module)
        if not isinstance(selector, str) and not is_type:
            msg = (
                f"watch(modules=...) takes glob patterns on module names and nn.Module "
                f"subclasses, got {describe(selector)}."
            )
            raise GradprobeTypeError(msg)
    chosen = [
        (name, module)
        for name, module in named
        if any(_matches(selector, name, module) for selector in selectors)
    ]
    for selector in selectors:
        if not any(_matches(selector, name, module) for name, module in named):
            sample = ", ".join(repr(name) for name, _ in named[1:6]) or "(none)"
            what = selector if isinstance(selector, str) else getattr(selector, "__name__", "?")
            msg = (
                f"watch(modules=...): {what!r} matches no module of this "
                f"{type(root).__name__}; names look like {sample}."
            )
            raise GradprobeValueError(msg)
    return chosen


def _matches(selector: object, name: str, module: nn.Module) -> bool:
    if isinstance(selector, str):
        return fnmatch.fnmatchcase(name, selector)
    return isinstance(selector, type) and isinstance(module, selector)


def parameters(
    root: nn.Module, chosen: Sequence[tuple[str, nn.Module]]
) -> tuple[list[str], list[str]]:
    """Names (model order, first name of tied parameters) of the parameters owned directly
    by the chosen modules, and the owner of each."""
    owners = {id(module): name for name, module in chosen}
    by_name = dict(root.named_modules())
    names: list[str] = []
    owner_names: list[str] = []
    for name, _ in root.named_parameters():
        owner = name.rpartition(".")[0]
        module = by_name.get(owner)
        if module is not None and id(module) in owners:
            names.append(name)
            owner_names.append(owner)
    return names, owner_names


def forward_sources(chosen: Sequence[tuple[str, nn.Module]]) -> dict[str, Location]:
    """Where each user-defined module's forward is: the ``created`` line of its outputs."""
    found: dict[str, Location] = {}
    for name, module in chosen:
        # inspect.getattr_static: a scripted module's class answers `forward` with a
        # descriptor that fails on the class itself
        code = getattr(inspect.getattr_static(type(module), "forward", None), "__code__", None)
        if code is None or not is_user_file(code.co_filename):
            continue
        found[name] = Location(
            file=shown_file(code.co_filename),
            line=code.co_firstlineno,
            role="created",
            function=f"{type(module).__name__}.forward",
            text=linecache.getline(code.co_filename, code.co_firstlineno).strip() or None,
        )
    return found
