"""Looking at tensors and autograd nodes without changing them or keeping them alive.

Reads that raise on some tensors (an inference tensor's version, the ``grad_fn`` of a view
whose base was written) answer None instead; values are only checked where that cannot
sync a device or change what a transform or a trace sees; tensors are held weakly
(:class:`_TensorMap`).
"""

from __future__ import annotations

import math
import weakref
from collections import deque
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

import torch

from gradprobe._recorder.events import Reparam
from gradprobe._trace import live_nodes
from gradprobe._trace import trace as _trace

_V = TypeVar("_V")


def _tensors(value: Any) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            if isinstance(item, torch.Tensor):
                yield item


def _version(tensor: torch.Tensor) -> int | None:
    try:
        return tensor._version
    except RuntimeError:  # inference tensors
        return None


def _grad_fn(tensor: torch.Tensor) -> Any:
    """``tensor.grad_fn``, or None where reading it raises.

    A view made under ``no_grad`` whose base was then written in place refuses to rebuild
    its ``grad_fn`` (``nn.Embedding(padding_idx=...)`` makes one while it initialises);
    that is the user's tensor's business, not a reason for the recorder to fail.
    """
    try:
        return tensor.grad_fn
    except RuntimeError:
        return None


def _storage(tensor: torch.Tensor) -> int:
    try:
        return tensor.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return 0


class _TensorMap(Generic[_V]):
    """``id(tensor) -> value`` for live tensors only. WeakKeyDictionary cannot hold tensors:
    comparing two weak references compares the tensors with ``==``, elementwise."""

    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: dict[int, tuple[weakref.ref[torch.Tensor], _V]] = {}

    def __bool__(self) -> bool:
        return bool(self.entries)

    def set(self, tensor: torch.Tensor, value: _V) -> None:
        key = id(tensor)
        entries = self.entries

        def forget(_: object, key: int = key) -> None:
            entries.pop(key, None)

        try:
            self.entries[key] = (weakref.ref(tensor, forget), value)
        except TypeError:
            return

    def get(self, tensor: torch.Tensor, default: _V | None = None) -> _V | None:
        entry = self.entries.get(id(tensor))
        if entry is None or entry[0]() is not tensor:
            return default
        return entry[1]

    def tensors(self) -> list[torch.Tensor]:
        alive = [ref() for ref, _ in list(self.entries.values())]
        return [t for t in alive if t is not None]

    def clear(self) -> None:
        self.entries.clear()


_is_wrapped = getattr(torch._C._functorch, "is_functorch_wrapped_tensor", lambda _: False)


def _checkable(tensor: torch.Tensor) -> bool:
    """Whether a value check is possible without changing what the user's code does: not
    inside vmap/jacfwd (no .item() there), a jit trace or a dynamo compile (the check
    would be traced), and not on a lazy module's uninitialized parameter."""
    return not (
        _is_wrapped(tensor)
        or torch.nn.parameter.is_lazy(tensor)
        or torch._C._is_tracing()
        or torch.compiler.is_compiling()
        or type(tensor) not in _PLAIN_TENSORS
    )


_PLAIN_TENSORS = (torch.Tensor, torch.nn.Parameter)


def _finite(tensor: torch.Tensor) -> bool:
    """No NaN or infinity in ``tensor``: one reduction, and an exact check only when the sum
    is not finite (NaN and infinities propagate through a sum; a finite sum can overflow)."""
    tensor = tensor.detach()  # isfinite would otherwise build an AbsBackward0 node
    if math.isfinite(float(tensor.sum())):
        return True
    return bool(torch.isfinite(tensor).all())


def _describe(tensor: torch.Tensor) -> str:
    kind = "parameter" if isinstance(tensor, torch.nn.Parameter) else "tensor"
    return f"{kind} of shape {tuple(tensor.shape)}"


def _current_sequence() -> int:
    """The sequence number the next autograd node made in this thread will get."""
    with torch.enable_grad():
        probe = torch.zeros((), requires_grad=True).mul(1)
    assert probe.grad_fn is not None
    return int(probe.grad_fn._sequence_nr()) + 1


def _unknown_or_nonzero(grad: torch.Tensor) -> bool:
    """Off the CPU (reading it would sync) or under a transform: unknown, so True."""
    return grad.device.type != "cpu" or not _checkable(grad) or bool(grad.any())


def _all_ones(grad: torch.Tensor) -> bool:
    return grad.device.type == "cpu" and _checkable(grad) and bool((grad == 1).all())


def _reparam_below(node: Any, reparams: dict[int, Reparam], limit: int = 64) -> Reparam | None:
    """The reparametrised parameter a few nodes below ``node``, if any."""
    queue, seen = deque([node]), {id(node)}
    while queue and len(seen) < limit:
        current = queue.popleft()
        variable = getattr(current, "variable", None)
        if variable is not None and id(variable) in reparams:
            return reparams[id(variable)]
        for child, _ in current.next_functions:
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                queue.append(child)
    return None


def _cloned_parameter(data: Any) -> torch.nn.Parameter | None:
    """The parameter ``data`` is a ``.clone()`` of (``nn.Parameter(p.clone())``), or None."""
    node = _grad_fn(data) if isinstance(data, torch.Tensor) else None
    if node is None or type(node).__name__ != "CloneBackward0":
        return None
    (source, _), *_ = node.next_functions or ((None, 0),)
    variable = getattr(source, "variable", None)
    return variable if isinstance(variable, torch.nn.Parameter) else None


def _leaves_below(
    tensor: torch.Tensor, limit: int = 100_000, *, parameters: bool = False
) -> list[int]:
    """ids of the leaf tensors (AccumulateGrad variables) the graph of ``tensor`` reaches;
    only the ``nn.Parameter`` ones with ``parameters``."""
    if _grad_fn(tensor) is None:
        return []
    graph = _trace(tensor, max_nodes=limit)  # wraps and protects the nodes walked below
    kind = torch.nn.Parameter if parameters else torch.Tensor
    return [
        id(node.variable)
        for node in live_nodes([tensor], len(graph.nodes))
        if isinstance(getattr(node, "variable", None), kind)
    ]
