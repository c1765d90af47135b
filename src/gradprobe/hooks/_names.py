"""Names for what hooks are attached to, and for the hooks themselves.

Shared by the inventory, the timeline, explain() and the recorder probe, so a hook is
called the same everywhere: ``partial(myhook, name='fc')`` for a ``functools.partial``,
``Net.hook`` for a bound method, the wrapped function for torch's ``_WrappedHook`` (how a
legacy module hook sits on an autograd node) and for gradprobe's own recording wrappers.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import torch
from torch.nn.modules.module import _WrappedHook

from gradprobe._patch import WRAPPED_ATTR
from gradprobe._source import shown_file

__all__ = [
    "WRAPPED_ATTR",
    "WrappedHook",
    "callable_name",
    "callable_source",
    "describe_tensor",
    "display_path",
    "find_module_name",
    "frame_variables",
    "in_internal",
    "internal",
    "is_torch_callable",
    "module_label",
    "unwrap_hook",
]

_local = threading.local()


@contextlib.contextmanager
def internal() -> Iterator[None]:
    """Mark hooks registered in this block as gradprobe's own (explain()'s copies), so the
    recorder probe and timeline() do not report or record them."""
    _local.depth = getattr(_local, "depth", 0) + 1
    try:
        yield
    finally:
        _local.depth -= 1


def in_internal() -> bool:
    """True inside :func:`internal` on this thread."""
    return bool(getattr(_local, "depth", 0))


WrappedHook = _WrappedHook
"""torch's wrapper of a legacy module hook on an autograd node (``torch.nn.modules.module``)."""

"""Attribute set on gradprobe's recording wrappers: the user's hook they call."""

_TORCH_DIR = str(Path(torch.__file__).resolve().parent) + os.sep
_MAX_REPR = 24


def unwrap_hook(fn: object) -> object:
    """The user's callable behind gradprobe's wrappers and torch's ``_WrappedHook``."""
    for _ in range(16):  # wrappers never nest deeper; a cycle must not hang us
        inner = getattr(fn, WRAPPED_ATTR, None)
        if inner is not None:
            fn = inner
            continue
        if isinstance(fn, _WrappedHook):
            fn = fn.hook
            continue
        break
    return fn


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_REPR else text[: _MAX_REPR - 1] + "…"


def callable_name(fn: object) -> str:
    """A readable name: ``myhook``, ``Net.hook``, ``<lambda>``, ``partial(myhook, name='fc')``."""
    fn = unwrap_hook(fn)
    if isinstance(fn, functools.partial):
        parts = [callable_name(fn.func)]
        parts.extend(_short(arg) for arg in fn.args)
        parts.extend(f"{key}={_short(value)}" for key, value in fn.keywords.items())
        return "partial(" + ", ".join(parts) + ")"
    if inspect.ismethod(fn):
        fn = fn.__func__
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if isinstance(name, str):
        return name.replace("<locals>.", "")
    return type(fn).__qualname__ + " instance"


def _function_of(fn: object) -> object:
    fn = unwrap_hook(fn)
    for _ in range(16):
        if isinstance(fn, functools.partial):
            fn = fn.func
        elif inspect.ismethod(fn):
            fn = fn.__func__
        elif isinstance(fn, _WrappedHook) or hasattr(fn, WRAPPED_ATTR):
            fn = unwrap_hook(fn)
        else:
            break
    if not inspect.isfunction(fn) and not inspect.isbuiltin(fn) and callable(fn):
        call = type(fn).__call__
        if inspect.isfunction(call):
            return call
    try:
        return inspect.unwrap(fn)  # type: ignore[arg-type]
    except ValueError:  # a __wrapped__ cycle
        return fn


def callable_source(fn: object) -> tuple[str, int] | None:
    """``(file, first line)`` where the hook's function is defined; None for builtins."""
    code = getattr(_function_of(fn), "__code__", None)
    if code is None:
        return None
    return shown_file(code.co_filename), int(code.co_firstlineno)


def is_torch_callable(fn: object) -> bool:
    """True for hooks that PyTorch installs itself (the machinery of full module hooks)."""
    code = getattr(_function_of(fn), "__code__", None)
    if code is None:
        return False
    return str(Path(code.co_filename).resolve()).startswith(_TORCH_DIR)


def display_path(file: str) -> str:
    """The file name only: what tables show (full paths stay in ``to_dict()``)."""
    return file if file.startswith("<") else Path(file).name


def module_label(module: torch.nn.Module, name: str | None) -> str:
    """``fc (Linear)``, or ``Linear`` when the module has no known name."""
    kind = type(module).__name__
    return f"{name} ({kind})" if name else kind


def describe_tensor(tensor: torch.Tensor, name: str | None = None) -> str:
    """``out (4, 3) ← AddmmBackward0``: a name (or ``tensor``), the shape, the node that
    made it (none for a leaf)."""
    shape = "(" + ", ".join(str(size) for size in tensor.shape) + ")"
    if tensor.dim() == 1:
        shape = f"({tensor.shape[0]},)"
    kind = name or ("parameter" if isinstance(tensor, torch.nn.Parameter) else "tensor")
    text = f"{kind} {shape}"
    grad_fn = tensor.grad_fn
    if grad_fn is not None:
        text += f" ← {grad_fn.name()}"
    return text


def frame_variables(frame: FrameType) -> list[tuple[str, Any]]:
    """``(name, value)`` for the local then global variables of ``frame``, leaving no
    snapshot behind.

    On CPython < 3.13, reading ``frame.f_locals`` of a function frame stores a dict of its
    locals on the frame until the function returns, which would keep the user's tensors
    alive after they ``del`` them; the snapshot is emptied again when nothing else holds
    it (``locals()`` in the user's code would).
    """
    optimized = bool(frame.f_code.co_flags & inspect.CO_OPTIMIZED)
    local_items: list[tuple[str, Any]] = []
    if optimized:
        snapshot = frame.f_locals
        local_items = list(snapshot.items())
        # frame + our name + getrefcount's argument: nobody else holds the snapshot
        if sys.version_info < (3, 13) and sys.getrefcount(snapshot) <= 3:
            snapshot.clear()
        del snapshot
    return [*local_items, *frame.f_globals.items()]


def find_module_name(
    module: torch.nn.Module,
    frame: FrameType | None,
    cache: dict[int, dict[int, str]] | None = None,
) -> str | None:
    """The name the user's code knows ``module`` by, from the variables of ``frame``.

    A module reachable from a variable holding a bigger model is named by its path in it
    (``model.fc``, ``mod.2``), the biggest such model winning; a module held directly by a
    variable takes that variable's name. ``cache`` maps ``id(root)`` to its
    ``{id(submodule): path}`` table across calls.
    """
    if frame is None:
        return None
    names: dict[int, str] = {}
    candidates: list[torch.nn.Module] = []
    for var, value in frame_variables(frame):
        # type() and not isinstance(): some globals (deprecated torch aliases) warn on
        # __class__ access.
        module_like = issubclass(type(value), torch.nn.Module)
        if module_like and not var.startswith("_") and id(value) not in names:
            names[id(value)] = var
            candidates.append(value)
    direct = next((names[id(root)] for root in candidates if root is module), None)
    roots = [root for root in candidates if root is not module]
    best = _best_path(module, roots, names, cache, refresh=False)
    if best is None and cache is not None:
        best = _best_path(module, roots, names, cache, refresh=True)  # models may have grown
    return best if best is not None else direct


def _best_path(
    module: torch.nn.Module,
    roots: list[torch.nn.Module],
    names: dict[int, str],
    cache: dict[int, dict[int, str]] | None,
    *,
    refresh: bool,
) -> str | None:
    """``var.path`` of ``module`` in the biggest of ``roots`` that contains it."""
    best: tuple[int, str] | None = None
    for root in roots:
        table = None if cache is None or refresh else cache.get(id(root))
        if table is None:
            table = {id(sub): path for path, sub in root.named_modules() if path}
            if cache is not None:
                cache[id(root)] = table
        path = table.get(id(module))
        if path is not None and (best is None or len(table) > best[0]):
            best = (len(table), f"{names[id(root)]}.{path}")
    return None if best is None else best[1]
