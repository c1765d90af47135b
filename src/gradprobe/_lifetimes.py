"""Hear about a module or an optimizer just before it is freed, while it is still whole.

A training script written as ``def main(): model = ...; train(model)`` frees its model and
optimizer when ``main`` returns, before the recording that watched them ends. Conclusions
that need them (which parameters got no gradient, what the optimizer covers) are drawn at
that moment instead: while any watcher is registered, ``nn.Module`` and
``torch.optim.Optimizer`` get a ``__del__`` that calls the watchers with the dying object.
``__del__`` runs before CPython clears the object's weak references, and nothing here keeps
the object, so it is freed right after, exactly as without gradprobe.

The finalizer is installed when the first watcher registers and removed when the last one
leaves, whatever the order (reference counted), and only where no class in the hierarchy
defines a ``__del__`` of its own.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import torch

__all__ = ["watch_lifetimes"]

_lock = threading.RLock()
_watchers: dict[int, Callable[[Any], None]] = {}
_installed: list[type] = []
_local = threading.local()


def _classes() -> tuple[type, ...]:
    return (torch.nn.Module, torch.optim.Optimizer)


def _dying(self: Any) -> None:
    """The ``__del__`` gradprobe installs while watching: tell every watcher, never raise."""
    if getattr(_local, "busy", False):
        return  # an object freed while a watcher is already concluding
    watchers = list(_watchers.values())
    if not watchers:
        return
    _local.busy = True
    try:
        for watcher in watchers:
            with contextlib.suppress(Exception):
                watcher(self)
    finally:
        _local.busy = False


_dying.__gradprobe_lifetimes__ = True  # type: ignore[attr-defined]


@contextlib.contextmanager
def watch_lifetimes(watcher: Callable[[Any], None]) -> Iterator[None]:
    """Call ``watcher(obj)`` when a module or optimizer is about to be freed, until exit."""
    token = object()
    with _lock:
        _watchers[id(token)] = watcher
        if not _installed:
            for cls in _classes():
                if "__del__" not in cls.__dict__ and not hasattr(cls, "__del__"):
                    cls.__del__ = _dying  # type: ignore[attr-defined]
                    _installed.append(cls)
    try:
        yield
    finally:
        with _lock:
            _watchers.pop(id(token), None)
            if not _watchers:
                while _installed:
                    cls = _installed.pop()
                    if cls.__dict__.get("__del__") is _dying:
                        del cls.__del__  # type: ignore[attr-defined]
