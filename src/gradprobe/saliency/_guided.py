"""The guided rule at operation level, and what it cannot reach (GP401).

See :mod:`gradprobe.saliency` for the design: a ``TorchDispatchMode`` rewrites the
backward kernels of the ReLU family during the backward only, and a ``TorchFunctionMode``
hooks the node of every ``clamp(min=0)`` during the forward.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor, nn
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from gradprobe.findings import Finding, make_finding

if TYPE_CHECKING:
    from torch.utils.hooks import RemovableHandle

__all__ = ["ClampWatch", "GuidedBackward", "blind_spots"]

# -- the guided rule --------------------------------------------------------------------------------


def _positive(grad: Tensor) -> Tensor:
    return grad.clamp(min=0)


def _positive_grads(grads: tuple[Tensor | None, ...]) -> tuple[Tensor | None, ...]:
    """Node pre-hook: the guided rule in front of a clamp's own backward."""
    return tuple(None if g is None else g.clamp(min=0) for g in grads)


_aten = torch.ops.aten


class GuidedBackward(TorchDispatchMode):  # type: ignore[no-untyped-call]
    """Active during the backward only: ReLU-family backward kernels get ``max(grad, 0)``.

    Each kernel already zeroes the gradient where its unit was off; clamping the incoming
    gradient at 0 adds the guided half of the rule. The check reads Python scalars only.
    """

    def __torch_dispatch__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        if (
            func is _aten.threshold_backward.default
            or (func is _aten.hardtanh_backward.default and args[2] == 0)
            or (func is _aten.leaky_relu_backward.default and args[2] == 0)
        ):
            args = (_positive(args[0]), *args[1:])
        return func(*args, **kwargs)


_CLAMPS = frozenset(("clamp", "clamp_", "clip", "clip_", "clamp_min", "clamp_min_"))


class ClampWatch(TorchFunctionMode):
    """Active during the forward (and the backward, for recomputed segments): hooks the
    autograd node of every ``clamp(min=0)`` without ``max`` with the guided rule."""

    def __init__(self) -> None:
        super().__init__()
        self.handles: list[RemovableHandle] = []

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()
        self.handles.clear()

    def __torch_function__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        if getattr(func, "__name__", None) in _CLAMPS and _relu_like_clamp(func, args, kwargs):
            return self._clamp(func, args, kwargs)
        return func(*args, **kwargs)

    def _clamp(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        tensor: Tensor = args[0] if args else kwargs["input"]
        inplace = func.__name__.endswith("_")
        if inplace and tensor._is_view():
            # The node of an in-place op on a view is hidden inside CopySlices; the same
            # values computed out of place (from a clone: clamp saves its input, which the
            # copy back overwrites) and copied back leave a node we can hook.
            clamped = torch.clamp(tensor.clone(), min=0)
            self._hook(clamped)
            return tensor.copy_(clamped)
        result = func(*args, **kwargs)
        self._hook(tensor if inplace else result)
        return result

    def _hook(self, tensor: object) -> None:
        node = tensor.grad_fn if isinstance(tensor, Tensor) else None
        if node is not None:
            self.handles.append(node.register_prehook(_positive_grads))


def _relu_like_clamp(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """``clamp(x, min=0)`` with no ``max``, on a tensor that requires grad."""
    if "out" in kwargs:
        return False
    tensor = args[0] if args else kwargs.get("input")
    if not isinstance(tensor, Tensor) or not tensor.requires_grad:
        return False
    low = args[1] if len(args) > 1 else kwargs.get("min")
    high = args[2] if len(args) > 2 else kwargs.get("max")
    return (
        high is None
        and isinstance(low, (int, float))
        and not isinstance(low, bool)
        and low == 0
        and torch.is_grad_enabled()
    )


_OPAQUE_CUSTOM_OK = frozenset(("BackwardHookFunctionBackward",))


def blind_spots(score: Tensor, model: nn.Module) -> tuple[Finding, ...]:
    """GP401 for graph parts whose backward the guided rule cannot reach."""
    from gradprobe._trace import trace

    graph = trace(score)
    counts: dict[tuple[str, str], int] = {}
    for node in graph.nodes:
        if node.kind == "compiled":
            key = ("compiled", node.name)
        elif "DifferentiableGraphBackward" in node.name:
            key = ("script", node.name)
        elif node.kind == "custom_function" and node.name not in _OPAQUE_CUSTOM_OK:
            key = ("custom", node.metadata.get("forward", node.name))
        else:
            continue
        counts[key] = counts.get(key, 0) + 1
    findings = []
    for (kind, name), count in counts.items():
        findings.append(_blind_spot_finding(kind, name, count, model))
    return tuple(findings)


def _blind_spot_finding(kind: str, name: str, count: int, model: nn.Module) -> Finding:
    times = f"{count} node{'s' if count > 1 else ''}"
    module: str | None = None
    if kind == "compiled":
        module = _first_module(model, lambda m: type(m).__name__ == "OptimizedModule")
        message = (
            f"The graph holds a torch.compile region ({name}, {times}): its backward is "
            "compiled code that gradprobe cannot rewrite, so ReLUs inside it keep their plain "
            "gradient and the map mixes guided backprop with the plain gradient there."
        )
        hint = "Run guided backprop on the eager model (the module before torch.compile)."
        node = "CompiledFunctionBackward"
    elif kind == "script":
        module = _first_module(model, lambda m: isinstance(m, torch.jit.ScriptModule))
        message = (
            f"The graph holds a TorchScript differentiable graph ({times}): TorchScript "
            "computes its own backward for the ReLUs inside, so they keep their plain gradient "
            "and the map mixes guided backprop with the plain gradient there."
        )
        hint = "Run guided backprop on the Python (unscripted) module."
        node = "DifferentiableGraphBackward"
    else:
        message = (
            f"The graph holds the custom autograd.Function {name} ({times}): its backward is "
            "its own code, so a ReLU inside it keeps the gradient that code computes, not "
            "the guided rule."
        )
        hint = (
            "If the Function applies a ReLU, apply it outside the Function (torch.relu on its "
            "output); otherwise this finding can be ignored."
        )
        node = name
    return make_finding(
        "GP401",
        message=message,
        hint=hint,
        node=node,
        module=module,
        details={"reason": kind, "nodes": count},
    )


def _first_module(model: nn.Module, test: Callable[[nn.Module], bool]) -> str | None:
    for name, m in model.named_modules():
        if test(m):
            return name or "<model>"
    return None
