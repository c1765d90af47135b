"""What kind of torch call the mode is handed, found once per function object.

``__torch_function__`` asks :func:`_kind` about every call: a backward, ``autograd.grad``,
a ``.grad`` read, an in-place op, a ``__setitem__``, a value leaving torch (``.item()``), a
functional dropout, a change of ``requires_grad``, torch's own private attributes, or any
other op. :func:`_kind_of_value` tells the ops whose result depends on their inputs'
values from those that only borrow a shape.
"""

from __future__ import annotations

import contextlib
import os
import weakref
from pathlib import Path
from typing import Any, TypeVar

import torch

_V = TypeVar("_V")


def _names(func: Any) -> str:
    return getattr(func, "__name__", "") or ""


_GRAD_GET: Any = torch._C.TensorBase.__dict__["grad"].__get__
_BACKWARDS = {torch.Tensor.backward: "backward", torch.autograd.backward: "backward"}
_GRAD = torch.autograd.grad
# values leaving torch as Python numbers or arrays (float(loss) as much as loss.item())
_SCALARS = frozenset({"item", "tolist", "numpy", "__float__", "__int__"})
_NOT_WRITES = frozenset({"requires_grad_", "retain_grad", "share_memory_", "record_stream"})

# Kinds of call, cached per function object.
_PLAIN, _INPLACE, _SETITEM, _BACKWARD, _AUTOGRAD_GRAD, _GRAD_READ, _SCALAR, _PRIVATE = range(8)
_DROPOUT = 8
_REQUIRES = 9  # requires_grad_() and the requires_grad setter
# functional dropouts whose `training` argument defaults to True (GP132)
_DROPOUTS = frozenset(
    getattr(torch.nn.functional, name)
    for name in (
        "dropout",
        "dropout1d",
        "dropout2d",
        "dropout3d",
        "alpha_dropout",
        "feature_alpha_dropout",
    )
    if hasattr(torch.nn.functional, name)
)
# Kinds of torch's own callables, for the life of the process. Callables made at run time
# (gradprobe's patches, which close over one recording's events and mode, or a user's
# function closing over their model) are cached weakly: a module-level cache holding them
# would keep every recording alive.
_kinds: dict[Any, int] = {}
_passing_kinds: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
_TORCH_DIR = str(Path(torch.__file__).parent) + os.sep


def _lasting(func: Any) -> bool:
    """Whether ``func`` may stay in a module-level cache for good: C functions and
    descriptors, and Python functions of torch's own package."""
    code = getattr(func, "__code__", None)
    if code is None:  # a bound method; a property's __get__/__set__
        inner = getattr(func, "__func__", None) or getattr(
            getattr(func, "__self__", None), "fget", None
        )
        code = getattr(inner, "__code__", None)
    if code is not None:
        return bool(code.co_filename.startswith(_TORCH_DIR))
    return type(func).__module__ == "builtins"  # not a partial or a callable object


def _remember(lasting: dict[Any, _V], passing: Any, func: Any, value: _V) -> None:
    if _lasting(func):
        lasting[func] = value
    else:
        with contextlib.suppress(TypeError):  # not weakly referable: not cached
            passing[func] = value


def _kind(func: Any) -> int:
    try:
        return _kinds[func]
    except KeyError:
        pass
    except TypeError:  # unhashable callables
        return _PLAIN
    with contextlib.suppress(TypeError):
        known = _passing_kinds.get(func)
        if known is not None:
            return known
    name = _names(func)
    if func == _GRAD_GET:
        kind = _GRAD_READ
    elif name == "requires_grad_" or (
        name == "__set__" and _names(getattr(func, "__self__", None)) == "requires_grad"
    ):
        kind = _REQUIRES
    elif name in ("__get__", "__set__") and _names(getattr(func, "__self__", None)).startswith("_"):
        # torch's own private attributes (``_backward_hooks``, set from C++ while it unpacks
        # a saved variable and holds the node's lock): touching the tensor here deadlocks.
        kind = _PRIVATE
    elif getattr(func, "__gradprobe_wraps__", func) in _BACKWARDS:  # watch wraps them
        kind = _BACKWARD
    elif getattr(func, "__gradprobe_wraps__", func) is _GRAD:
        kind = _AUTOGRAD_GRAD
    elif func in _DROPOUTS:
        kind = _DROPOUT
    elif name == "__setitem__":
        kind = _SETITEM
    elif name.endswith("_") and not name.endswith("__") and name not in _NOT_WRITES:
        kind = _INPLACE
    elif name in _SCALARS:
        kind = _SCALAR
    else:
        kind = _PLAIN
    _remember(_kinds, _passing_kinds, func, kind)
    return kind


_NOT_VALUES = frozenset({"size", "dim", "numel", "stride", "__len__", "shape"})
_value_kinds: dict[Any, bool] = {}  # as _kinds: torch's own callables only
_passing_value_kinds: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


_DATA = next(k.__dict__["data"] for k in torch.Tensor.__mro__ if "data" in k.__dict__)


def _is_data_get(func: Any) -> bool:
    """``tensor.data``: the mode sees the getter of the ``data`` descriptor."""
    return getattr(func, "__self__", None) is _DATA and _names(func) == "__get__"


def _kind_of_value(func: Any) -> bool:
    """Whether ``func``'s result depends on its inputs' values, so that a result without
    grad is a cut: zeros_like/randn_like/new_ones and shape queries only borrow a shape."""
    try:
        return _value_kinds[func]
    except KeyError:
        with contextlib.suppress(TypeError):
            known = _passing_value_kinds.get(func)
            if known is not None:
                return known
        name = _names(func)
        verdict = not (name.endswith("_like") or name.startswith("new_") or name in _NOT_VALUES)
        _remember(_value_kinds, _passing_value_kinds, func, verdict)
        return verdict
    except TypeError:
        return True
