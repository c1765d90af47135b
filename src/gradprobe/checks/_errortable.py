"""Plain-words explanations of the torch errors the error catalogue added (GP149-GP164), from
the text alone: what the message means and what to change. :func:`explain_error` in
:mod:`gradprobe.checks._errortext` falls back on this table; checks that read the recording
(``gradprobe.checks.raised``) name better lines where they can."""

from __future__ import annotations

import re
from collections.abc import Callable

from gradprobe import _compat as t

__all__ = ["EXCEPTION_TYPES", "explain_plain"]

# errors torch raises as something other than RuntimeError: save_for_backward's TypeError,
# GradScaler's ValueError
EXCEPTION_TYPES = (RuntimeError, TypeError, ValueError)

_Explain = Callable[[re.Match[str] | None], str]


def _grad_output(m: re.Match[str] | None) -> str:
    shapes = f" (got {m['given']}, the output is {m['expected']})" if m and m["given"] else ""
    return (
        "The gradient passed to backward()/autograd.grad does not have its output's "
        f"shape{shapes}: each gradient starts the chain rule for one output and must match it "
        "(torch.ones_like(out) for a plain sum of its elements)."
    )


def _batched(_m: re.Match[str] | None) -> str:
    return (
        "autograd.grad(..., is_grads_batched=True) reads the first dimension of each "
        "grad_output as a batch of vectors: every grad_output needs that extra leading "
        "dimension in front of its output's shape (torch.eye(n) for a full Jacobian of an "
        "n-vector)."
    )


def _complex(m: re.Match[str] | None) -> str:
    dtype = m["dtype"] if m else "a complex dtype"
    return (
        f"backward() was called without a gradient on a {dtype} value; autograd only starts "
        "from 1.0 for a real scalar. Turn the loss real first: .abs(), .real, or "
        "(z * z.conj()).real."
    )


def _plain(text: str) -> _Explain:
    return lambda _m: text


# (pattern, code, explanation): first match wins; the order puts narrower texts first
_TABLE: tuple[tuple[str | re.Pattern[str], str, _Explain], ...] = (
    (t.GRAD_OUTPUT_SHAPE_ERROR, "GP149", _grad_output),
    (t.BATCHED_GRAD_SHAPE_ERROR, "GP149", _batched),
    (t.COMPLEX_IMPLICIT_ERROR, "GP150", _complex),
    (
        t.INPUT_WITHOUT_GRAD_ERROR,
        "GP151",
        _plain(
            "torch.autograd.grad was asked for the gradient of a tensor that does not require "
            "grad, so no graph contains it. Create it with requires_grad=True (or call "
            ".requires_grad_() before the forward that uses it), or leave it out of inputs."
        ),
    ),
    (
        t.SAVE_NON_TENSOR_ERROR,
        "GP152",
        lambda m: (
            "ctx.save_for_backward was given "
            + (f"a {m['type']} as argument {m['index']}" if m else "a value that is not a tensor")
            + "; it keeps only tensors (and None). Keep other values as ctx attributes "
            "(ctx.k = k) and save only tensors."
        ),
    ),
    (
        t.ONCE_DIFFERENTIABLE_ERROR,
        "GP153",
        _plain(
            "A second-order backward (create_graph=True, then a backward through the "
            "gradients) reached a custom Function whose backward is @once_differentiable: "
            "that backward ran without building a graph. Remove the decorator and write the "
            "backward with differentiable torch ops, or keep that Function out of the part "
            "differentiated twice."
        ),
    ),
    (
        t.HOOK_WITHOUT_GRAD_ERROR,
        "GP154",
        _plain(
            "register_hook was called on a tensor that does not require grad; it will never "
            "receive a gradient, so its hook could never run. Register it on a tensor that "
            "requires grad (an activation computed from parameters, a parameter)."
        ),
    ),
    (
        t.CHECKPOINT_MISMATCH_ERROR,
        "GP155",
        _plain(
            "A non-reentrant torch.utils.checkpoint recomputed its function during backward "
            "and the recomputation did not save the same tensors as the forward did: the "
            "function depends on something besides its arguments (a counter, a Python "
            "random draw, a global, the module's mode). Make it depend only on its inputs."
        ),
    ),
    (
        t.REENTRANT_CHECKPOINT_GRAD_ERROR,
        "GP156",
        _plain(
            "torch.autograd.grad (or backward(inputs=...)) reached a checkpoint made with "
            "use_reentrant=True, which supports plain .backward() only. Pass "
            "use_reentrant=False to checkpoint()."
        ),
    ),
    (
        t.INFERENCE_OUTSIDE_ERROR,
        "GP157",
        lambda m: (
            "A tensor made under torch.inference_mode() was "
            + ("made to require grad" if m and m["flag"] else "written in place")
            + " after the block ended; inference tensors cannot be changed outside it. Make "
            "it under torch.no_grad() instead, or use a copy: t = t.clone()."
        ),
    ),
    (
        t.DETACH_VIEW_ERROR,
        "GP158",
        _plain(
            "detach_() was called on a view (a slice, a reshape, or a gradient that "
            "DistributedDataParallel keeps as a bucket view). A view cannot leave its base's "
            "graph alone: use v = v.detach(), or p.grad = None to clear a gradient."
        ),
    ),
    (
        t.FUNC_GRAD_NONSCALAR_ERROR,
        "GP159",
        lambda m: (
            "torch.func.grad(f) needs f to return a single-element tensor; this one returned a "
            + (f"{m['dims']}-dimensional tensor" if m else "tensor of several elements")
            + ". Reduce inside f (.sum(), .mean()) or use torch.func.vjp / jacrev."
        ),
    ),
    (
        t.AUTOGRAD_INSIDE_TRANSFORM_ERROR,
        "GP160",
        _plain(
            "requires_grad_() (or torch.autograd.functional) was called inside a function "
            "transformed by torch.func (grad, vjp, jacrev, vmap). The transform already "
            "differentiates with respect to its argnums: drop the call, or make it outside."
        ),
    ),
    (
        t.UNSCALE_TWICE_ERROR,
        "GP161",
        _plain(
            "scaler.unscale_(optimizer) was called a second time before scaler.update(): the "
            "gradients were already divided by the loss scale. Call it once per step, right "
            "before clipping (scaler.step unscales by itself when it was not called)."
        ),
    ),
    (
        t.FP16_UNSCALE_ERROR,
        "GP162",
        _plain(
            "GradScaler found float16 gradients: the model's parameters are float16 (a "
            ".half() call). Mixed precision keeps float32 parameters; run the forward under "
            "torch.autocast(device_type, dtype=torch.float16) instead of converting the model."
        ),
    ),
    (
        t.DDP_UNFINISHED_REDUCTION_ERROR,
        "GP163",
        _plain(
            "DistributedDataParallel never got the gradients of some parameters in the "
            "previous iteration (the forward did not use them), so its reduction did not "
            "finish and this forward cannot start. Pass find_unused_parameters=True, or "
            "remove or freeze the unused parameters."
        ),
    ),
    (
        t.DDP_READY_TWICE_ERROR,
        "GP164",
        _plain(
            "DistributedDataParallel saw one parameter's gradient twice in one backward: a "
            "reentrant checkpoint around a layer used twice, or a parameter used outside "
            "forward. Use checkpoint(..., use_reentrant=False), or static_graph=True when the "
            "graph never changes."
        ),
    ),
)


def explain_plain(text: str) -> tuple[str, str] | None:
    """``(code, explanation)`` for one of the catalogue's newer messages, or None."""
    for pattern, code, explain in _TABLE:
        if isinstance(pattern, str):
            if pattern in text:
                return code, explain(None)
        else:
            match = pattern.search(text)
            if match is not None:
                return code, explain(match)
    return None
