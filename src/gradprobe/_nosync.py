"""A test guard for gradprobe's promise that its hooks never wait for the device.

On CUDA, ``.item()``, ``.tolist()``, ``bool(tensor)`` or ``nonzero()`` inside a hook makes
the host wait for every queued kernel, once per hook call; a watched training loop would
crawl. CPU tensors cannot show the problem, so the tests check the rule directly: every
gradprobe hook body is wrapped with :func:`hook_body`, and inside
:func:`forbid_host_syncs` the syncing tensor methods raise :class:`HostSyncError` when
they are called from such a body (and behave normally anywhere else).

Outside the guard :func:`hook_body` costs one global read per call.

Example:
    >>> import torch
    >>> from gradprobe._nosync import HostSyncError, forbid_host_syncs, hook_body
    >>> @hook_body
    ... def bad_hook(grad):
    ...     return grad.sum().item()
    >>> with forbid_host_syncs():
    ...     torch.ones(2).sum().item()  # not in a hook body: allowed
    ...     try:
    ...         bad_hook(torch.ones(2))
    ...     except HostSyncError as error:
    ...         print(str(error).split(":")[0])
    2.0
    Tensor.item() was called inside the gradprobe hook 'bad_hook'
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

import torch

from gradprobe.errors import HostSyncError

__all__ = ["SYNCING_METHODS", "HostSyncError", "forbid_host_syncs", "hook_body", "in_hook_body"]

_P = ParamSpec("_P")
_R = TypeVar("_R")

SYNCING_METHODS: tuple[str, ...] = (
    "item",
    "tolist",
    "__bool__",
    "__float__",
    "__int__",
    "nonzero",
    "numpy",
)
"""``torch.Tensor`` methods that copy a value to the host, so wait for the device."""

_SYNCING_FUNCTIONS: tuple[str, ...] = ("nonzero", "is_nonzero", "equal", "allclose")

_guards = 0  # how many forbid_host_syncs() blocks are open (any thread)
_guard_lock = threading.Lock()
_local = threading.local()
_saved: list[tuple[dict[str, Any], dict[str, Any]]] = []  # originals while patched


def in_hook_body() -> bool:
    """True while this thread runs a function wrapped with :func:`hook_body` inside a
    :func:`forbid_host_syncs` block."""
    return bool(getattr(_local, "hook", None))


def hook_body(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Mark ``fn`` as the body of a gradprobe hook: no host syncs allowed inside it.

    Free outside :func:`forbid_host_syncs` apart from one global read per call; inside it,
    the hook's name is kept in a thread-local so a syncing call can say which hook made it.
    """
    name = getattr(fn, "__qualname__", repr(fn))

    @functools.wraps(fn)
    def marked(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if not _guards:
            return fn(*args, **kwargs)
        outer = getattr(_local, "hook", None)
        _local.hook = name
        try:
            return fn(*args, **kwargs)
        finally:
            _local.hook = outer

    return marked


def _guarded(owner: str, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    def guarded(*args: Any, **kwargs: Any) -> Any:
        hook = getattr(_local, "hook", None)
        if hook:
            msg = (
                f"{owner}.{name}() was called inside the gradprobe hook {hook!r}: it copies a "
                "value to the host, which waits for every queued kernel on CUDA. Keep the "
                "value as a tensor and read it when reporting, outside the hook."
            )
            raise HostSyncError(msg)
        return original(*args, **kwargs)

    guarded.__name__ = name
    guarded.__qualname__ = f"{owner}.{name}"
    return guarded


@contextmanager
def forbid_host_syncs() -> Iterator[None]:
    """Make the syncing tensor methods raise :class:`HostSyncError` inside hook bodies.

    Patches ``torch.Tensor`` (:data:`SYNCING_METHODS`) and ``torch.nonzero``,
    ``torch.is_nonzero``, ``torch.equal`` and ``torch.allclose`` for the duration of the
    block and restores them on exit, also when the block raises. Meant for tests: the
    patched methods are slower, and the patch is process-wide (only calls made inside a
    hook body on some thread raise). Blocks may nest.
    """
    global _guards
    saved_methods: dict[str, Any] = {}
    saved_functions: dict[str, Any] = {}
    with _guard_lock:
        _guards += 1
        first = _guards == 1
        if first:
            for name in SYNCING_METHODS:
                # Most live on torch._C.TensorBase; remember whether Tensor overrode one.
                saved_methods[name] = torch.Tensor.__dict__.get(name)
                setattr(torch.Tensor, name, _guarded("Tensor", name, getattr(torch.Tensor, name)))
            for name in _SYNCING_FUNCTIONS:
                saved_functions[name] = getattr(torch, name)
                setattr(torch, name, _guarded("torch", name, saved_functions[name]))
            _saved.append((saved_methods, saved_functions))
    try:
        yield
    finally:
        with _guard_lock:
            _guards -= 1
            if _guards == 0:
                methods, functions = _saved.pop()
                for name, previous in methods.items():
                    if previous is None:
                        delattr(torch.Tensor, name)
                    else:
                        setattr(torch.Tensor, name, previous)
                for name, previous in functions.items():
                    setattr(torch, name, previous)
