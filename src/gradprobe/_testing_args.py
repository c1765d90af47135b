"""Argument checks of :mod:`gradprobe.testing`: every bad input says what to pass instead."""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable, Mapping, Sequence

import torch

from gradprobe.errors import GradprobeTypeError, GradprobeValueError, describe

__all__ = [
    "check_atol",
    "check_loss",
    "check_names",
    "check_tensor",
    "grad_readable",
    "named_any",
    "named_tensors",
    "select",
]

Tensor = torch.Tensor


def check_tensor(tensor: object, caller: str) -> None:
    if not isinstance(tensor, torch.Tensor):
        msg = f"{caller}() needs a tensor, got {describe(tensor)}."
        raise GradprobeTypeError(msg)


def check_loss(loss: object) -> None:
    if not isinstance(loss, torch.Tensor):
        msg = (
            f"assert_grad_flows(loss=...) must be a tensor or None, got {describe(loss)}; "
            "pass the loss tensor itself, e.g. assert_grad_flows(model, criterion(model(x), y))."
        )
        raise GradprobeTypeError(msg)
    if loss.numel() != 1:
        msg = (
            f"assert_grad_flows(loss=...) needs a scalar loss, got a tensor of shape "
            f"{tuple(loss.shape)}; reduce it first (loss.sum() or loss.mean())."
        )
        raise GradprobeValueError(msg)


def check_atol(atol: object) -> float:
    if isinstance(atol, bool) or not isinstance(atol, (int, float)):
        msg = f"atol must be a number >= 0, got {describe(atol)}."
        raise GradprobeTypeError(msg)
    if not math.isfinite(atol) or atol < 0:
        msg = f"atol must be a finite number >= 0, got {atol!r}; 0.0 fails only exact zeros."
        raise GradprobeValueError(msg)
    return float(atol)


def check_names(expected: object) -> list[str]:
    if isinstance(expected, str) or not isinstance(expected, Sequence):
        msg = (
            f"expected must be a list of hook names, got {describe(expected)}; e.g. "
            "['on_output', 'on_input']."
        )
        raise GradprobeTypeError(msg)
    names: list[str] = []
    for item in expected:
        if not isinstance(item, str):
            msg = f"expected must hold hook names (strings), got {describe(item)}."
            raise GradprobeTypeError(msg)
        names.append(item)
    return names


def named_tensors(model: object, caller: str) -> list[tuple[str, Tensor]]:
    if isinstance(model, torch.nn.Module):
        named: list[tuple[str, Tensor]] = list(model.named_parameters())
        if not named:
            msg = f"{caller}() was given {type(model).__name__}, which has no parameters."
            raise GradprobeValueError(msg)
        return named
    if isinstance(model, Mapping):
        named = []
        for key, value in model.items():
            if not isinstance(value, torch.Tensor):
                msg = f"{caller}() got {describe(value)} for {key!r}; map names to tensors."
                raise GradprobeTypeError(msg)
            named.append((str(key), value))
        if not named:
            msg = f"{caller}() was given an empty mapping: nothing to check."
            raise GradprobeValueError(msg)
        return named
    msg = (
        f"{caller}() needs an nn.Module or a {{name: tensor}} mapping, got {describe(model)}; "
        f"e.g. {caller}(model, loss)."
    )
    raise GradprobeTypeError(msg)


def named_any(value: object) -> list[tuple[str, Tensor]]:
    if isinstance(value, torch.Tensor):
        return [("tensor", value)]
    if isinstance(value, (torch.nn.Module, Mapping)):
        return named_tensors(value, "assert_grads_finite")
    if isinstance(value, Sequence) and not isinstance(value, str):
        named: list[tuple[str, Tensor]] = []
        for i, item in enumerate(value):
            if not isinstance(item, torch.Tensor):
                msg = f"assert_grads_finite() got {describe(item)} at index {i}; pass tensors."
                raise GradprobeTypeError(msg)
            named.append((f"tensor[{i}]", item))
        if named:
            return named
    msg = (
        "assert_grads_finite() needs an nn.Module, a tensor, a list of tensors or a "
        f"{{name: tensor}} mapping, got {describe(value)}."
    )
    raise GradprobeTypeError(msg)


def grad_readable(tensor: Tensor) -> bool:
    # Reading .grad of a non-leaf that does not retain it warns; it is None anyway.
    return bool(tensor.is_leaf or tensor.retains_grad)


def select(
    named: list[tuple[str, Tensor]], params: Iterable[str | Tensor] | None
) -> list[tuple[str, Tensor]]:
    if params is None:
        return named
    if isinstance(params, (str, torch.Tensor)):
        params = [params]
    chosen: dict[str, Tensor] = {}
    by_id = {id(tensor): name for name, tensor in named}
    items: Iterable[object] = params
    for item in items:
        if isinstance(item, torch.Tensor):
            found = by_id.get(id(item))
            if found is None:
                msg = (
                    f"params= holds a tensor of shape {tuple(item.shape)} that is not one of "
                    "the model's parameters; pass the model's own parameters or their names."
                )
                raise GradprobeValueError(msg)
            chosen[found] = item
        elif isinstance(item, str):
            matches = [(n, t) for n, t in named if n == item or fnmatch.fnmatchcase(n, item)]
            if not matches:
                known = ", ".join(n for n, _ in named[:12]) + (", ..." if len(named) > 12 else "")
                msg = f"params= names {item!r}, which matches no parameter; names are: {known}."
                raise GradprobeValueError(msg)
            chosen.update(matches)
        else:
            msg = f"params= must hold parameter names or tensors, got {describe(item)}."
            raise GradprobeTypeError(msg)
    if not chosen:
        msg = "params= is empty: nothing to check; pass None to check every parameter."
        raise GradprobeValueError(msg)
    order = [name for name, _ in named]
    return sorted(chosen.items(), key=lambda pair: order.index(pair[0]))
