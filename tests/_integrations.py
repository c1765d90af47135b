"""Helpers shared by the Lightning and Transformers callback tests."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

_MODULE_DICTS = (
    "_forward_hooks",
    "_forward_hooks_with_kwargs",
    "_forward_hooks_always_called",
    "_forward_pre_hooks",
    "_forward_pre_hooks_with_kwargs",
    "_backward_hooks",
    "_backward_pre_hooks",
)


def attached(model: nn.Module, optimizer: torch.optim.Optimizer | None) -> dict[Any, Any]:
    """Every hook registry and patched name watch() and record() use, as plain copies:
    equal before and after a run when nothing stayed attached."""
    from torch.optim import optimizer as optim_module

    state: dict[Any, Any] = {}
    for name, module in model.named_modules():
        for attr in _MODULE_DICTS:
            state[(name, attr)] = dict(getattr(module, attr))
    for name, param in model.named_parameters():
        hooks = param._backward_hooks
        state[("param", name)] = None if hooks is None else dict(hooks)
    registry = torch.nn.modules.module
    for attr in dir(registry):
        if attr.startswith("_global_"):
            value = getattr(registry, attr)
            state[("global", attr)] = dict(value) if isinstance(value, dict) else value
    state["step hooks"] = (
        dict(optim_module._global_optimizer_pre_hooks),
        dict(optim_module._global_optimizer_post_hooks),
    )
    if optimizer is not None:
        state["optimizer hooks"] = (
            dict(optimizer._optimizer_step_pre_hooks),
            dict(optimizer._optimizer_step_post_hooks),
        )
    state["patched"] = (
        torch.autograd.backward,
        torch.autograd.grad,
        torch.Tensor.__dict__.get("__setattr__"),
        torch.Tensor.__dict__["register_hook"],
        torch.nn.Module.__dict__["__init__"],
        torch.optim.Optimizer.__dict__["__init__"],
        torch.no_grad.__dict__["__enter__"],
    )
    state["torch function modes"] = torch._C._len_torch_function_stack()
    return state


def line_of(function: Callable[..., Any], marker: str) -> int:
    """The line number of the line of ``function``'s source that contains ``marker``."""
    lines, first = inspect.getsourcelines(function)
    return next(first + i for i, line in enumerate(lines) if marker in line)
