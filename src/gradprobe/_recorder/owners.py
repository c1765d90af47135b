"""Which modules hold a tensor or a module, found by who refers to it (:mod:`gc`).

For objects no forward ran through (a parameter of a head never called, the other side of
a weight tie): a search through every object, so only error paths and bounded notes use it.
"""

from __future__ import annotations

import gc

import torch

__all__ = ["holders_of", "qualified_owner"]


def holders_of(value: object, slot: str) -> list[tuple[str, torch.nn.Module]]:
    """Every (key, module) whose ``module.<slot>`` table (``_parameters``, ``_modules``)
    holds ``value`` under ``key``."""
    found: list[tuple[str, torch.nn.Module]] = []
    for table in gc.get_referrers(value):
        if not isinstance(table, dict):
            continue
        key = next((k for k, v in table.items() if v is value), None)
        if key is None:
            continue
        for referrer in gc.get_referrers(table):
            if isinstance(referrer, torch.nn.Module) and referrer.__dict__.get(slot) is table:
                found.append((key, referrer))
            elif isinstance(referrer, dict) and referrer.get(slot) is table:  # a __dict__
                found.extend(
                    (key, owner)
                    for owner in gc.get_referrers(referrer)
                    if isinstance(owner, torch.nn.Module) and owner.__dict__ is referrer
                )
    return found


def qualified_owner(tensor: torch.Tensor) -> tuple[str | None, torch.nn.Module | None]:
    """A parameter's name through the modules that hold it, up to the outermost, and the
    module that holds it directly."""
    direct = holders_of(tensor, "_parameters")
    if not direct:
        return None, None
    name, owner = direct[0]
    module = owner
    for _ in range(32):  # up through the containers to the outermost module
        parents = holders_of(module, "_modules")
        if not parents:
            break
        name = f"{parents[0][0]}.{name}"
        module = parents[0][1]
    return name, owner
