"""Argument checking, the score to explain, and leaving the model as it was.

Shared by the saliency functions of :mod:`gradprobe.saliency` and the pictures of
:mod:`gradprobe.plot`; every bad argument raises a GradprobeError naming what was passed
and what to do instead.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.autograd.graph import GradientEdge

from gradprobe.errors import GradprobeTypeError, GradprobeValueError, describe, error_text

__all__ = [
    "Target",
    "called_times",
    "check_input",
    "check_model",
    "grad_of",
    "input_leaf",
    "one_activation",
    "resolve_layer",
    "short_list",
    "target_score",
    "undisturbed",
    "upsample",
]

Target = int | Sequence[int] | Tensor | Callable[[Any], Tensor] | None
"""The score to explain: ``None`` (each sample's top class), a class index, one class per
sample (a sequence or an integer tensor of shape ``(B,)``), or a callable that takes the
model's output and returns a scalar or one score per sample."""


def short_list(tensor: Tensor, limit: int = 8) -> str:
    values = tensor.reshape(-1)[: limit + 1].tolist()  # reporting time: one sync is fine
    text = ", ".join(str(v) for v in values[:limit])
    return f"[{text}{', ...' if len(values) > limit else ''}]"


# -- argument checking -------------------------------------------------------------------------


def check_model(model: object, caller: str, *, module_only: bool) -> nn.Module:
    if isinstance(model, nn.Module):
        return model
    if not module_only and callable(model):
        return nn.Module()  # nothing to name or preserve for a plain callable
    kind = "a torch.nn.Module" if module_only else "a torch.nn.Module or a callable"
    msg = (
        f"{caller}(model, ...) expects {kind}, got {describe(model)}. "
        "Pass the model itself, e.g. "
        f"{caller}(model, images{', layer=model.features[-1]' if module_only else ''})."
    )
    raise GradprobeTypeError(msg)


def check_input(x: object, caller: str, *, needs_grad: bool = True) -> Tensor:
    if not isinstance(x, Tensor):
        msg = (
            f"{caller}(model, x) expects x to be a torch.Tensor batch, got {describe(x)}. "
            "Stack the inputs first: x = torch.stack(images)."
        )
        raise GradprobeTypeError(msg)
    if not x.is_floating_point():
        msg = (
            f"{caller}() needs a floating-point input to differentiate, got dtype {x.dtype} "
            f"with shape {tuple(x.shape)}. For token ids, explain the embeddings instead "
            "(pass a callable that starts after the embedding layer)."
        )
        raise GradprobeTypeError(msg)
    if x.layout != torch.strided:
        msg = (
            f"{caller}() needs a dense input, got a {x.layout} tensor of shape "
            f"{tuple(x.shape)}: saliency maps are per element. Pass x.to_dense()."
        )
        raise GradprobeTypeError(msg)
    if needs_grad and x.is_meta:
        msg = (
            f"{caller}() needs an input with values, got a tensor on the meta device (shape "
            f"{tuple(x.shape)}), which has none to differentiate. Pass real data on the "
            "model's device."
        )
        raise GradprobeValueError(msg)
    if needs_grad and torch.is_inference_mode_enabled():
        msg = (
            f"{caller}() was called inside torch.inference_mode(), where no gradient can be "
            "computed. Call it outside the inference_mode block."
        )
        raise GradprobeValueError(msg)
    if x.ndim < 1 or x.shape[0] == 0:
        msg = (
            f"{caller}() expects a batch (B, ...) with B >= 1, got shape {tuple(x.shape)}. "
            "For a single image use x.unsqueeze(0)."
        )
        raise GradprobeValueError(msg)
    return x


def input_leaf(x: Tensor) -> tuple[Tensor, Tensor]:
    """A fresh leaf to differentiate against, and the tensor to feed the model.

    The model gets a clone, so that a model writing into its input in place neither
    touches the user's ``x`` nor trips "a leaf Variable that requires grad is being used
    in an in-place operation".
    """
    # An inference tensor (made under torch.inference_mode()) cannot require grad; a
    # clone made outside inference mode is an ordinary tensor with the same values.
    leaf = (x.clone() if x.is_inference() else x.detach()).requires_grad_(True)
    with torch.enable_grad():
        return leaf, leaf.clone()


def resolve_layer(
    model: nn.Module, layer: object, caller: str, *, required: bool = False
) -> tuple[str, nn.Module]:
    if layer is None and not required:
        convs = [
            (name, m) for name, m in model.named_modules() if isinstance(m, nn.modules.conv._ConvNd)
        ]
        if not convs:
            msg = (
                f"{caller}() found no convolution in {type(model).__name__} to use as the "
                "default layer. Pass one: layer=model.features[-1] or layer='features.3'."
            )
            raise GradprobeValueError(msg)
        return convs[-1]
    if isinstance(layer, str):
        try:
            return layer, model.get_submodule(layer)
        except AttributeError:
            names = [name for name, _ in model.named_modules() if name][:12]
            msg = (
                f"{caller}(layer={layer!r}): {type(model).__name__} has no submodule with "
                f"that name. Names look like {', '.join(repr(n) for n in names) or '(none)'}."
            )
            raise GradprobeValueError(msg) from None
    if isinstance(layer, nn.Module):
        for name, m in model.named_modules(remove_duplicate=False):
            if m is layer:
                return name or "<model>", m
        msg = (
            f"{caller}(layer=...): the {type(layer).__name__} passed is not a submodule of "
            f"this {type(model).__name__} (compared by identity). Pass the model's own module, "
            "e.g. layer=model.features[-1], not a copy."
        )
        raise GradprobeValueError(msg)
    msg = (
        f"{caller}(layer=...) expects an nn.Module of the model or its name, got "
        f"{describe(layer)}. Example: layer=model.layer4 or layer='layer4'."
    )
    raise GradprobeTypeError(msg)


def called_times(name: str, times: int, caller: str) -> str:
    if times == 0:
        return (
            f"{caller}(layer={name!r}): the layer was not called in the forward pass, so "
            "there is no activation to use. Pick a module that forward() calls."
        )
    return (
        f"{caller}(layer={name!r}): the layer was called {times} times in one forward pass; "
        "a map needs a single activation. Pick a module that is called once (not a "
        "shared one), or wrap the part you want in its own module."
    )


def one_activation(
    captured: list[tuple[object, GradientEdge | None]], name: str
) -> tuple[Tensor, GradientEdge]:
    if len(captured) != 1:
        raise GradprobeValueError(called_times(name, len(captured), "grad_cam"))
    ((out, edge),) = captured
    if not isinstance(out, Tensor):
        msg = (
            f"grad_cam(layer={name!r}): the layer returned {describe(out)}, not a tensor. "
            "Grad-CAM needs a layer returning one (B, K, H, W) tensor: a convolution or a "
            "block of them."
        )
        raise GradprobeValueError(msg)
    if out.ndim < 3:
        msg = (
            f"grad_cam(layer={name!r}): the layer's output has shape {tuple(out.shape)}; "
            "Grad-CAM needs (B, K, *spatial) with at least one spatial dimension. Pick a "
            "convolutional layer before the flatten/pooling."
        )
        raise GradprobeValueError(msg)
    if edge is None:
        msg = (
            f"grad_cam(layer={name!r}): the layer's output does not require grad, so the "
            "target cannot be differentiated with respect to it (is it computed under "
            "torch.no_grad(), or detached?)."
        )
        raise GradprobeValueError(msg)
    return out, edge


# -- the score to explain -----------------------------------------------------------------------


def target_score(
    output: Any, target: Target, batch: int, caller: str
) -> tuple[Tensor, Tensor | None]:
    """The scalar to differentiate, and the class per sample (None for a callable)."""
    if callable(target) and not isinstance(target, Tensor):
        score = target(output)
        if not isinstance(score, Tensor) or not score.is_floating_point():
            msg = (
                f"{caller}(target=fn): fn(output) must return a floating-point tensor (a "
                f"scalar or one score per sample), got {describe(score)}."
            )
            raise GradprobeTypeError(msg)
        if score.ndim > 1 or (score.ndim == 1 and score.shape[0] != batch):
            msg = (
                f"{caller}(target=fn): fn(output) returned shape {tuple(score.shape)}; "
                f"return a scalar or one score per sample, shape ({batch},)."
            )
            raise GradprobeValueError(msg)
        if not score.requires_grad:
            msg = (
                f"{caller}(target=fn): fn(output) returned a tensor that does not depend on "
                "the model's output (it does not require grad). Compute it from `output`, "
                "e.g. target=lambda out: out[:, 3]."
            )
            raise GradprobeValueError(msg)
        return score.sum(), None
    if not isinstance(output, Tensor) or output.ndim < 2 or output.shape[0] != batch:
        shape = tuple(output.shape) if isinstance(output, Tensor) else None
        got = f"a tensor of shape {shape}" if shape is not None else describe(output)
        msg = (
            f"{caller}() picks a class from the model's output (B={batch}, classes, ...), but "
            f"the model returned {got}. Pass target=fn with fn(output) returning the score "
            "to explain, e.g. target=lambda out: out['logits'][:, 3]."
        )
        raise GradprobeValueError(msg)
    classes = _classes(output, target, batch, caller)
    index = classes.reshape(batch, 1, *(1,) * (output.ndim - 2))
    index = index.expand(batch, 1, *output.shape[2:])
    # Samples do not interact in the model (no BatchNorm in train mode), so the gradient
    # of the summed scores is every sample's own gradient.
    return output.gather(1, index).sum(), classes


def _classes(output: Tensor, target: object, batch: int, caller: str) -> Tensor:
    count = output.shape[1]
    device = output.device
    if target is None:
        if output.ndim != 2:
            msg = (
                f"{caller}(target=None) takes each sample's top class, which needs an output "
                f"of shape (B, classes); the model returned {tuple(output.shape)}. Pass a "
                "class index or target=fn."
            )
            raise GradprobeValueError(msg)
        return output.detach().argmax(dim=1)
    if isinstance(target, bool) or not isinstance(target, (int, Sequence, Tensor)):
        msg = (
            f"{caller}(target=...) must be None, a class index, one class per sample or a "
            f"callable, got {describe(target)}."
        )
        raise GradprobeTypeError(msg)
    if isinstance(target, int):
        if not 0 <= target < count:
            msg = (
                f"{caller}(target={target}) is out of range: the output has {count} classes "
                f"(0..{count - 1})."
            )
            raise GradprobeValueError(msg)
        return torch.full((batch,), target, dtype=torch.long, device=device)
    if isinstance(target, Tensor):
        if target.is_floating_point() or target.is_complex() or target.dtype == torch.bool:
            msg = (
                f"{caller}(target=tensor) needs integer class indices, got dtype "
                f"{target.dtype}. Use target=labels.long()."
            )
            raise GradprobeTypeError(msg)
        classes = target.detach().to(device=device, dtype=torch.long)
    else:
        items = list(target)
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in items):
            msg = f"{caller}(target=[...]) must hold int class indices, got {describe(target)}."
            raise GradprobeTypeError(msg)
        classes = torch.tensor(items, dtype=torch.long, device=device)
    if classes.ndim == 0:
        classes = classes.expand(batch)
    if tuple(classes.shape) != (batch,):
        msg = (
            f"{caller}(target=...) has shape {tuple(classes.shape)}; give one class per sample, "
            f"shape ({batch},), or a single int."
        )
        raise GradprobeValueError(msg)
    # One host sync, outside any hook: an out-of-range index would be a device assert on CUDA.
    if bool(((classes < 0) | (classes >= count)).any()):
        msg = (
            f"{caller}(target=...) holds class indices outside 0..{count - 1} "
            f"({short_list(classes)}); the output has {count} classes."
        )
        raise GradprobeValueError(msg)
    return classes


def grad_of(
    score: Tensor,
    inputs: Sequence[Tensor] | Sequence[GradientEdge],
    caller: str,
    *,
    layer: str | None = None,
) -> tuple[Tensor, ...]:
    if not score.requires_grad:
        msg = (
            f"{caller}(): the target score does not depend on the input (it does not require "
            "grad): is the forward pass run under torch.no_grad() or detached inside the model?"
        )
        raise GradprobeValueError(msg)
    try:
        grads: tuple[Tensor | None, ...] = torch.autograd.grad(score, inputs, allow_unused=True)
    except RuntimeError as error:
        text = error_text(error)
        if "checkpoint" in text.lower() and ".grad()" in text:
            msg = (
                f"{caller}(): the model uses reentrant activation checkpointing, which "
                "torch.autograd.grad cannot run through. Use "
                "torch.utils.checkpoint.checkpoint(..., use_reentrant=False)."
            )
            raise GradprobeValueError(msg) from error
        raise
    if grads[0] is None:
        where = f"the output of layer {layer!r}" if layer is not None else "the input"
        msg = (
            f"{caller}(): the target score does not depend on {where}, so there is no "
            "gradient to show. Check the target and the layer."
        )
        raise GradprobeValueError(msg)
    return tuple(g.detach() for g in grads if g is not None)


def upsample(cam: Tensor, size: tuple[int, ...]) -> Tensor:
    modes = {1: "linear", 2: "bilinear", 3: "trilinear"}
    if len(size) != cam.ndim - 1 or len(size) not in modes or tuple(cam.shape[1:]) == size:
        return cam
    return F.interpolate(cam.unsqueeze(1), size=size, mode=modes[len(size)], align_corners=False)[
        :, 0
    ]


# -- leaving the model as it was -----------------------------------------------------------------


@contextlib.contextmanager
def undisturbed(model: nn.Module, x: Tensor) -> Iterator[None]:
    """Run the saliency forward without leaving traces in the model or the RNG.

    A model in training mode updates BatchNorm running statistics in forward, and dropout
    draws random numbers: the buffers are put back and the random state restored, so a
    saliency call in the middle of training changes nothing the training loop sees.
    """
    buffers: list[tuple[Tensor, Tensor]] = []
    if any(m.training for m in model.modules()):
        with torch.no_grad():
            buffers = [(b, b.clone()) for b in model.buffers() if b is not None]
    devices: list[int] = []
    device_type = "cuda"
    if x.device.type != "cpu":
        device_type = x.device.type
        index: int | None = x.device.index
        if index is None:
            accelerator: Any = getattr(torch, device_type, None)
            index = accelerator.current_device() if hasattr(accelerator, "current_device") else 0
        devices = [index]
    try:
        with torch.random.fork_rng(devices=devices, device_type=device_type):
            yield
    finally:
        if buffers:
            with torch.no_grad():
                for buffer, saved in buffers:
                    buffer.copy_(saved)
