"""Which tensors the running backward pass was asked for.

``loss.backward(inputs=[...])`` and ``torch.autograd.grad(loss, [...])`` compute gradients
for the listed tensors only: a watched parameter left out got no gradient by request, not
by a bug (GP107). No hook tells which inputs a pass was asked for, so while a watch session
is open ``torch.autograd.backward`` and ``torch.autograd.grad`` are wrapped: each call
pushes its ``inputs`` (``None`` for a whole backward) for the duration of the call, and the
session's gradient hooks, which fire inside it, read the innermost one. The recorder,
which sees these calls through its function mode, reads the same ``inputs`` with
:func:`asked_inputs`.

One wrapper serves every open session in the process; it is installed by the first and
removed by the last, in whatever order they close (NOTE [shared patches] in
:mod:`gradprobe._patch`). A wrapper that somebody else put over ours after we
installed it is left in place; ours then only passes calls through. The requests are kept
per thread: a backward running in another thread never shows up as this one's.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import Tensor

from gradprobe._patch import Patches, SharedPatches

__all__ = ["acquire", "asked_inputs", "innermost", "release", "requests"]


class _Requests(threading.local):
    def __init__(self) -> None:  # once per thread
        # The inputs of each backward/autograd.grad call this thread is running, innermost
        # last; None for a whole backward().
        self.stack: list[tuple[Tensor, ...] | None] = []


_REQUESTS = _Requests()


def requests() -> list[tuple[Tensor, ...] | None]:
    """The calling thread's running requests, innermost last."""
    return _REQUESTS.stack


def innermost() -> tuple[Tensor, ...] | None:
    """The inputs the innermost running pass was asked for; None: all leaves (or unknown)."""
    stack = _REQUESTS.stack
    return stack[-1] if stack else None


def asked_inputs(
    args: tuple[Any, ...], kwargs: dict[str, Any], position: int
) -> tuple[tuple[Any, ...], dict[str, Any], tuple[Tensor, ...] | None]:
    """The tensors a backward()/autograd.grad call asks for (``inputs`` at ``position`` or
    by keyword; None: all leaves), with the arguments to pass on: an iterator such as
    ``model.parameters()`` is read here, once, and handed on as a list."""
    inputs = kwargs.get("inputs", args[position] if len(args) > position else None)
    if inputs is None:
        return args, kwargs, None
    if isinstance(inputs, Tensor):
        return args, kwargs, (inputs,)
    if isinstance(inputs, dict):
        values: Iterable[Any] = inputs.values()
    elif isinstance(inputs, Iterable):
        if not isinstance(inputs, list | tuple):
            inputs = list(inputs)
            if "inputs" in kwargs:
                kwargs = {**kwargs, "inputs": inputs}
            else:
                args = (*args[:position], inputs, *args[position + 1 :])
        values = inputs
    else:
        return args, kwargs, None
    # GradientEdge inputs name a node, not a tensor: they match no parameter.
    return args, kwargs, tuple(item for item in values if isinstance(item, Tensor))


def _wrap(original: Callable[..., Any], position: int) -> Callable[..., Any]:
    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        args, kwargs, inputs = asked_inputs(args, kwargs, position)
        stack = _REQUESTS.stack
        stack.append(inputs)
        try:
            return original(*args, **kwargs)
        finally:
            stack.pop()

    wrapper.__gradprobe_wraps__ = original  # type: ignore[attr-defined]
    return wrapper


# backward(tensors, grad_tensors, retain_graph, create_graph, grad_variables, inputs)
# grad(outputs, inputs, ...)
_POSITIONS = {"backward": 5, "grad": 1}


def _install(patches: Patches) -> None:
    for name, position in _POSITIONS.items():
        patches.set(torch.autograd, name, _wrap(getattr(torch.autograd, name), position))


_SHARED = SharedPatches(_install)


def acquire() -> None:
    """Install the wrappers (the first open session does)."""
    _SHARED.acquire()


def release() -> None:
    """Remove the wrappers (the last session to close does)."""
    _SHARED.release()
