"""Invariant 6 of the training step: the model holds each module once (GP184).

A module object may be *used* several times (a siamese encoder applied to two inputs, one
layer applied at every depth) and a whole module may be registered at two places on
purpose (an embedding shared by an encoder and a decoder). What a model never means is
one object standing in for several *siblings*: the slots of one ``nn.ModuleList`` or
``nn.Sequential`` (or the same place inside each of their elements) are built to be
separate layers, and when they are one object they apply, and train, one set of weights.

=============================  ===============================================================
how                            cause
=============================  ===============================================================
one object at several slots    the line that built the container (``[block] * n``,
of one container               ``[block for _ in range(n)]``)
one object handed to every     the line that built the object, when that is in the function
element of a container         that built the container (``ff = nn.Sequential(...)`` before
                               the comprehension that passes it to each layer)
=============================  ===============================================================

Only modules with parameters or buffers count (one ``nn.ReLU`` object at every slot
computes what separate ones would), and only when an optimizer that stepped holds their
parameters: the finding is about what training does with them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch

from gradprobe._recorder import Events, SourceLine
from gradprobe.checks._api import Check, Run, register
from gradprobe.checks._common import _locations, _top_modules, _where
from gradprobe.findings import Finding, LocationRole, make_finding

__all__ = ["SharedSiblings"]

_REPORTED = 3  # findings per run: one per shared module is plenty
_CONTAINERS = (torch.nn.ModuleList, torch.nn.Sequential, torch.nn.ModuleDict)


@dataclass(frozen=True)
class _Shared:
    """One module object found at several sibling places of a model."""

    module: torch.nn.Module
    container: torch.nn.Module
    container_path: str
    paths: tuple[str, ...]


@register
class SharedSiblings(Check):
    """One module object at several slots of one container (GP184)."""

    name = "gradprobe.structure.shared_siblings"
    codes = ("GP184",)
    reads_modules = True

    def conclude(self, run: Run) -> Iterable[Finding]:
        if not run.events.steps:
            return []
        held = {id(p) for opt in run.optimizers for g in opt.param_groups for p in g["params"]}
        found = [
            _finding(run.events, shared)
            for top in _top_modules(run.modules)
            for shared in _shared_siblings(top)
            if any(id(p) in held for p in shared.module.parameters())
        ]
        return found[:_REPORTED]


def _shared_siblings(top: torch.nn.Module) -> list[_Shared]:
    """Modules with state that ``top`` holds at two places differing only by the slot of
    one container (``layers.0`` and ``layers.1``, or ``layers.0.ff`` and ``layers.1.ff``),
    outermost first: the children of a shared module are not reported again."""
    paths: dict[int, list[str]] = {}
    modules: dict[int, torch.nn.Module] = {}
    for path, module in top.named_modules(remove_duplicate=False):
        paths.setdefault(id(module), []).append(path)
        modules[id(module)] = module
    found: list[_Shared] = []
    reported: set[int] = set()
    for key, where in paths.items():
        module = modules[key]
        if len(where) < 2 or not _has_state(module):
            continue
        if any(id(inner) in reported for inner in _ancestors(top, where[0])):
            continue
        sibling = _sibling_slots(top, where)
        if sibling is not None:
            container_path, slots = sibling
            container = top.get_submodule(container_path) if container_path else top
            found.append(_Shared(module, container, container_path, slots))
            reported.add(key)
    return found


def _has_state(module: torch.nn.Module) -> bool:
    return any(True for _ in module.parameters()) or any(True for _ in module.buffers())


def _ancestors(top: torch.nn.Module, path: str) -> list[torch.nn.Module]:
    parts = path.split(".") if path else []
    return [top.get_submodule(".".join(parts[:n])) for n in range(1, len(parts))]


def _sibling_slots(
    top: torch.nn.Module, where: Sequence[str]
) -> tuple[str, tuple[str, ...]] | None:
    """The container and the two places of ``where`` that differ only by its slot, when
    the elements at those slots are of one class (layers of one stack, not an encoder and
    a decoder that share an embedding)."""
    split = [path.split(".") for path in where]
    for i, first in enumerate(split):
        for second in split[i + 1 :]:
            if len(first) != len(second):
                continue
            differ = [n for n, (a, b) in enumerate(zip(first, second, strict=True)) if a != b]
            if len(differ) != 1:
                continue
            at = differ[0]
            container_path = ".".join(first[:at])
            container = top.get_submodule(container_path) if container_path else top
            if not isinstance(container, _CONTAINERS):
                continue
            one = container.get_submodule(first[at])
            other = container.get_submodule(second[at])
            if type(one) is type(other):
                return container_path, (".".join(first), ".".join(second))
    return None


def _cause(events: Events, shared: _Shared) -> tuple[SourceLine | None, SourceLine | None]:
    """The line to change and the container's line: where the shared object was built
    when that is the function that built the container (it is handed to each element
    there), else the container's own line (``[block] * n``)."""
    container = events.module_sites.get(id(shared.container))
    made = events.module_sites.get(id(shared.module))
    if (
        made is not None
        and container is not None
        and made[0] == container[0]
        and made[2] == container[2]
        and made[1] < container[1]
    ):
        return made, container
    return container or made, container


def _finding(events: Events, shared: _Shared) -> Finding:
    kind = type(shared.module).__name__
    holder = type(shared.container).__name__
    cause, container = _cause(events, shared)
    first, second = shared.paths
    count = sum(p.numel() for p in shared.module.parameters())
    message = (
        f"{first} and {second} are one {kind} object, placed at two slots of the "
        f"{holder} {shared.container_path or 'model'} (built at {_where(container)}): the "
        f"slots apply and train the same {count} weights instead of one set each, so "
        "the model has fewer layers than it was built to have, and nothing raises."
    )
    hint = (
        f"Build one {kind} per slot (nn.ModuleList([make() for _ in range(n)])); "
        "[module] * n and passing one object to every element repeat the reference. If "
        "sharing is meant, register the module once and call it at each place."
    )
    pairs: list[tuple[SourceLine | None, LocationRole]] = [(cause, "cause")]
    if container is not None and container != cause:
        pairs.append((container, "created"))
    return make_finding(
        "GP184",
        message=message,
        module=kind,
        hint=hint,
        locations=_locations(*pairs),
        details={"places": list(shared.paths), "container": shared.container_path},
    )
