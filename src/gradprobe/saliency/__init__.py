"""Saliency maps through hooks: plain gradient, guided backprop, Grad-CAM, feature maps.

Every function runs one forward and one backward of the user's model on a copy of the
input and returns a :class:`SaliencyMap`. The model is never rebuilt or patched: no module
is replaced (its identity, ``inplace=True`` flags and the user's own hooks stay as they
are), gradients are taken with ``torch.autograd.grad`` so no parameter's ``.grad`` is
written, and whatever gradprobe installs for the call (a forward hook, node pre-hooks,
two modes) is removed before the function returns, also when the model raises.

Guided backprop works at the level of operations, not modules. The guided rule (pass a
gradient back through a ReLU only where the unit was on *and* the gradient is positive)
is applied where the ReLU's backward runs:

- ``aten.threshold_backward``, the backward kernel of every ReLU however it was called
  (``nn.ReLU`` with or without ``inplace=True``, ``F.relu``, ``torch.relu``,
  ``Tensor.relu_``, ``F.threshold``, a ReLU applied in place to a view, a ReLU called
  from C++), plus ``aten.hardtanh_backward`` with ``min_val=0`` (``nn.ReLU6``,
  ``F.hardtanh(x, 0, ...)``) and ``aten.leaky_relu_backward`` with slope 0, are rewritten
  by a ``TorchDispatchMode`` that is active only during the saliency call's backward;
- ``clamp(min=0)`` / ``clamp_min(0)`` / ``clip(min=0)`` (and their in-place forms) with no
  ``max`` are ReLUs written differently: a ``TorchFunctionMode`` active during the call
  puts a pre-hook on the autograd node each one creates (an in-place clamp of a view is
  run as ``view.copy_(view.clamp(min=0))``, which computes the same values, so that its
  node can be hooked). A clamp with a tensor ``min`` is left alone: telling whether that
  tensor is 0 would need a host sync.

What the rule cannot reach is reported as finding GP401 (and, by default, warned about):
a TorchScript graph (``DifferentiableGraphBackward``), a ``torch.compile`` region
(``CompiledFunctionBackward``) and a custom ``autograd.Function`` compute their own
backward, so a ReLU inside them keeps its plain gradient. ReLUs written as arithmetic
(``x * (x > 0)``, ``torch.where(x > 0, x, 0)``, ``torch.maximum(x, zeros)``) are not
recognised as ReLUs; LeakyReLU with a non-zero slope, GELU, ELU and SiLU are not ReLUs and
keep their plain gradient by design.

The backward runs with ``torch.autograd.set_multithreading_enabled(False)`` so that it
stays on the calling thread, where the modes are active, on CUDA as on CPU.

Example:
    >>> import torch
    >>> from torch import nn
    >>> from gradprobe.saliency import guided_backprop
    >>> model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=True), nn.Linear(4, 2))
    >>> result = guided_backprop(model, torch.ones(1, 3), target=0)
    >>> result.map.shape, result.findings
    (torch.Size([1, 3]), ())
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.autograd.graph import GradientEdge, get_gradient_edge

from gradprobe.errors import (
    GradprobeTypeError,
    GradprobeValueError,
    GradprobeWarning,
    SaliencyBlindSpotError,
    describe,
)
from gradprobe.findings import Finding
from gradprobe.saliency import _guided, _inputs
from gradprobe.saliency._inputs import Target

__all__ = [
    "BlindSpotPolicy",
    "Method",
    "SaliencyBlindSpotError",
    "SaliencyMap",
    "Target",
    "activations",
    "grad_cam",
    "gradient",
    "guided_backprop",
]

Method = Literal["gradient", "guided_backprop", "grad_cam"]
"""Which saliency method produced a :class:`SaliencyMap`."""

BlindSpotPolicy = Literal["warn", "raise", "ignore"]
"""What :func:`guided_backprop` does when it finds ReLUs it cannot reach (GP401)."""


@dataclass(frozen=True, eq=False)
class SaliencyMap:
    """One saliency result: the map, the classes explained and what could not be done.

    ``map`` is detached. For ``gradient`` and ``guided_backprop`` it has the input's
    shape (``(B, C, H, W)`` for images). For ``grad_cam`` it is ``(B, *spatial)``,
    upsampled (bilinear) to the input's spatial size when the input has as many spatial
    dimensions as the layer's output, else at the layer's resolution;
    ``activation_map`` is the map at the layer's resolution and ``weights`` the
    per-channel weights ``(B, K)`` (the spatial mean of the gradient).

    ``target`` holds the class explained for each sample (``(B,)`` int64), or is None
    when the target was a callable. ``findings`` lists GP401 findings (guided backprop
    only).

    Example:
        >>> import torch
        >>> from gradprobe.saliency import gradient
        >>> result = gradient(torch.nn.Linear(3, 2), torch.ones(4, 3), target=[0, 1, 1, 0])
        >>> result
        <SaliencyMap gradient (4, 3) target=[0, 1, 1, 0], 0 findings>
        >>> result.map.shape
        torch.Size([4, 3])
    """

    method: Method
    map: Tensor
    target: Tensor | None
    findings: tuple[Finding, ...] = ()
    layer: str | None = None
    activation_map: Tensor | None = None
    weights: Tensor | None = None

    def __repr__(self) -> str:
        target = "callable" if self.target is None else _inputs.short_list(self.target)
        layer = f" layer={self.layer!r}" if self.layer is not None else ""
        return (
            f"<SaliencyMap {self.method} {tuple(self.map.shape)} target={target}{layer}, "
            f"{len(self.findings)} findings>"
        )

    def to_png(self, image: Tensor | None = None, **options: Any) -> bytes:
        """PNG bytes of this map (and the ``image`` under it); needs ``gradprobe[plot]``.

        ``options`` go to :class:`gradprobe.plot.SaliencyPicture`.
        """
        from gradprobe.plot import SaliencyPicture

        return SaliencyPicture(self, image, **options).to_png()

    def save_png(self, path: str | Path, image: Tensor | None = None, **options: Any) -> Path:
        """Write :meth:`to_png` to ``path``; returns the path."""
        from gradprobe.plot import SaliencyPicture

        return SaliencyPicture(self, image, **options).save_png(path)


# -- public functions --------------------------------------------------------------------------


def gradient(model: Callable[[Tensor], Any], x: Tensor, target: Target = None) -> SaliencyMap:
    """The plain gradient of the target score with respect to the input ("vanilla"
    saliency).

    Args:
        model: the model, or any callable taking ``x``.
        x: a batch of inputs, ``(B, ...)``, floating point; it is not modified.
        target: see :data:`Target`.

    Returns:
        A :class:`SaliencyMap` whose ``map`` is ``d score / d x``, shaped like ``x``.

    Raises:
        GradprobeTypeError: ``x`` is not a floating-point tensor, or ``target`` has the
            wrong kind.
        GradprobeValueError: a class index out of range, or a target that does not fit
            the output.

    Example:
        >>> import torch
        >>> from gradprobe.saliency import gradient
        >>> layer = torch.nn.Linear(2, 2)
        >>> with torch.no_grad():
        ...     _ = layer.weight.copy_(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
        >>> gradient(layer, torch.zeros(1, 2), target=1).map
        tensor([[3., 4.]])
    """
    module = _inputs.check_model(model, "gradient", module_only=False)
    xs = _inputs.check_input(x, "gradient")
    with _inputs.undisturbed(module, xs):
        leaf, feed = _inputs.input_leaf(xs)
        with torch.enable_grad():
            output = model(feed)
            score, classes = _inputs.target_score(output, target, xs.shape[0], "gradient")
            (grad,) = _inputs.grad_of(score, [leaf], "gradient")
    return SaliencyMap("gradient", grad, classes)


def guided_backprop(
    model: Callable[[Tensor], Any],
    x: Tensor,
    target: Target = None,
    *,
    on_blind_spot: BlindSpotPolicy = "warn",
) -> SaliencyMap:
    """Guided backpropagation (Springenberg et al. 2015): the input gradient where every
    ReLU passes back only positive gradients, and only where it was on.

    Works for ``nn.ReLU`` (also ``inplace=True``), ``F.relu``, ``torch.relu``, ``relu_``,
    ``F.threshold``, ``nn.ReLU6`` and ``clamp(min=0)``, without replacing any module; see
    the module docstring for how and for what it cannot reach.

    Args:
        model: the model, or any callable taking ``x``.
        x: a batch of inputs, ``(B, ...)``, floating point; it is not modified.
        target: see :data:`Target`.
        on_blind_spot: what to do when the graph holds parts the rule cannot reach
            (TorchScript, ``torch.compile``, custom autograd Functions): ``"warn"`` (a
            :class:`~gradprobe.errors.GradprobeWarning`), ``"raise"``
            (:class:`SaliencyBlindSpotError`) or ``"ignore"``. The findings are in the
            result either way.

    Returns:
        A :class:`SaliencyMap` shaped like ``x``, with GP401 findings if any.

    Raises:
        GradprobeTypeError: a bad ``x``, ``target`` or ``on_blind_spot``.
        GradprobeValueError: a class index out of range, or a target that does not fit
            the output.
        SaliencyBlindSpotError: blind spots found and ``on_blind_spot="raise"``.

    Example:
        >>> import torch
        >>> from gradprobe.saliency import guided_backprop
        >>> relu = torch.nn.ReLU(inplace=True)
        >>> model = lambda x: relu(x) * torch.tensor([[1.0, -1.0]])
        >>> guided_backprop(model, torch.tensor([[2.0, 3.0]]), target=lambda out: out.sum()).map
        tensor([[1., 0.]])
    """
    module = _inputs.check_model(model, "guided_backprop", module_only=False)
    xs = _inputs.check_input(x, "guided_backprop")
    if on_blind_spot not in ("warn", "raise", "ignore"):
        msg = (
            f"guided_backprop(on_blind_spot=...) must be 'warn', 'raise' or 'ignore', got "
            f"{describe(on_blind_spot)}."
        )
        raise GradprobeTypeError(msg)
    watch = _guided.ClampWatch()
    rewrite = _guided.GuidedBackward()  # type: ignore[no-untyped-call]
    with _inputs.undisturbed(module, xs):
        leaf, feed = _inputs.input_leaf(xs)
        try:
            with torch.enable_grad():
                with watch:
                    output = model(feed)
                    score, classes = _inputs.target_score(
                        output, target, xs.shape[0], "guided_backprop"
                    )
                findings = _guided.blind_spots(score, module)
                # On the calling thread, where both modes are active (CUDA backward
                # otherwise runs on the device's worker thread).
                with torch.autograd.set_multithreading_enabled(False), watch, rewrite:
                    (grad,) = _inputs.grad_of(score, [leaf], "guided_backprop")
        finally:
            watch.remove()
    if findings and on_blind_spot != "ignore":
        text = " ".join(str(finding) for finding in findings)
        if on_blind_spot == "raise":
            raise SaliencyBlindSpotError(
                f"guided_backprop() cannot apply the guided rule everywhere: {text}", findings
            )
        warnings.warn(text, GradprobeWarning, stacklevel=2)
    return SaliencyMap("guided_backprop", grad, classes, findings=findings)


def grad_cam(
    model: nn.Module,
    x: Tensor,
    target: Target = None,
    *,
    layer: nn.Module | str | None = None,
    relu: bool = True,
) -> SaliencyMap:
    """Grad-CAM (Selvaraju et al. 2017) at one layer.

    With ``A`` the layer's output (``(B, K, *spatial)``, as the layer returned it, before
    any in-place operation that follows) and ``G = d score / d A``: the weights are
    ``w[b, k] = mean over spatial of G[b, k]`` and the map is
    ``relu(sum over k of w[b, k] * A[b, k])``. A forward hook on ``layer`` (removed
    afterwards) records ``A`` and its autograd edge, so an ``nn.ReLU(inplace=True)`` after
    the layer does not change the result.

    Args:
        model: the model.
        x: a batch of inputs, ``(B, C, *spatial)``, floating point; it is not modified.
        target: see :data:`Target`.
        layer: the module whose output to use, or its name in ``model.named_modules()``
            (``"features.3"``); by default the last convolution of the model.
        relu: apply the final ReLU (``False`` keeps the negative evidence too).

    Returns:
        A :class:`SaliencyMap`: ``map`` upsampled to the input's spatial size,
        ``activation_map`` at the layer's resolution, ``weights`` ``(B, K)``.

    Raises:
        GradprobeTypeError: a bad ``model``, ``x``, ``layer`` or ``target``.
        GradprobeValueError: a layer that is not in the model, is not called exactly once,
            does not return one tensor with spatial dimensions, or does not influence
            the target.

    Example:
        >>> import torch
        >>> from torch import nn
        >>> from gradprobe.saliency import grad_cam
        >>> model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(32, 2))
        >>> result = grad_cam(model, torch.randn(1, 1, 6, 6), target=0)
        >>> result.layer, tuple(result.activation_map.shape), tuple(result.map.shape)
        ('0', (1, 4, 4), (1, 6, 6))
    """
    module = _inputs.check_model(model, "grad_cam", module_only=True)
    xs = _inputs.check_input(x, "grad_cam")
    name, chosen = _inputs.resolve_layer(module, layer, "grad_cam")
    with _inputs.undisturbed(module, xs):
        # The input requires grad, so that a frozen model's activations do too.
        _, feed = _inputs.input_leaf(xs)
        captured: list[tuple[object, GradientEdge | None]] = []

        def record(_module: nn.Module, _args: Any, out: Any) -> None:
            if isinstance(out, Tensor) and out.requires_grad:
                # clone: an in-place op after the layer would change the values we keep
                captured.append((out.detach().clone(), get_gradient_edge(out)))
            else:
                captured.append((out, None))

        handle = chosen.register_forward_hook(record)
        try:
            with torch.enable_grad():
                output = module(feed)
        finally:
            handle.remove()
        activation, edge = _inputs.one_activation(captured, name)
        with torch.enable_grad():
            score, classes = _inputs.target_score(output, target, xs.shape[0], "grad_cam")
        (grad,) = _inputs.grad_of(score, [edge], "grad_cam", layer=name)
    spatial = tuple(range(2, activation.ndim))
    weights = grad.mean(dim=spatial)
    cam = (weights.reshape(*weights.shape, *(1,) * len(spatial)) * activation).sum(dim=1)
    if relu:
        cam = F.relu(cam)
    upsampled = _inputs.upsample(cam, tuple(xs.shape[2:]))
    return SaliencyMap(
        "grad_cam",
        upsampled,
        classes,
        layer=name,
        activation_map=cam,
        weights=weights,
    )


def activations(model: nn.Module, x: Tensor, layer: nn.Module | str) -> Tensor:
    """The output of ``layer`` when ``model`` runs on ``x`` (for feature-map pictures).

    Runs the model once under ``torch.no_grad()`` with a forward hook on ``layer``
    (removed afterwards); the result is a copy taken when the layer returned, so an
    in-place operation after it does not change it.

    Raises:
        GradprobeTypeError: a bad ``model``, ``x`` or ``layer``.
        GradprobeValueError: a layer that is not in the model, is not called exactly once,
            or does not return a tensor.

    Example:
        >>> import torch
        >>> from torch import nn
        >>> from gradprobe.saliency import activations
        >>> model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(inplace=True))
        >>> tuple(activations(model, torch.randn(2, 1, 5, 5), "0").shape)
        (2, 4, 3, 3)
    """
    module = _inputs.check_model(model, "activations", module_only=True)
    xs = _inputs.check_input(x, "activations", needs_grad=False)
    name, chosen = _inputs.resolve_layer(module, layer, "activations", required=True)
    captured: list[object] = []

    def record(_module: nn.Module, _args: Any, out: Any) -> None:
        captured.append(out.detach().clone() if isinstance(out, Tensor) else out)

    with _inputs.undisturbed(module, xs):
        handle = chosen.register_forward_hook(record)
        try:
            with torch.no_grad():
                module(xs.detach().clone())
        finally:
            handle.remove()
    if len(captured) != 1:
        raise GradprobeValueError(_inputs.called_times(name, len(captured), "activations"))
    (out,) = captured
    if not isinstance(out, Tensor):
        msg = (
            f"activations(layer={name!r}): the layer returned {describe(out)}, not a tensor. "
            "Pick a module that returns one tensor (a convolution, an activation, a block)."
        )
        raise GradprobeValueError(msg)
    return out
