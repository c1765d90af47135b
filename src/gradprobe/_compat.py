"""What gradprobe relies on that differs between torch versions or lives in torch's words.

Torch's error messages are the only public account of some facts (the version a saved
tensor had, which hook changed a gradient), so gradprobe parses them; each text is written
down once, here, with the torch versions it was checked on (2.13 and 2.14, see
``shared/TORCH-FACTS.md``). Version gates are here too, so a new torch release is one
file to read.

Example:
    >>> from gradprobe._compat import FREED_ERROR
    >>> FREED_ERROR in "Trying to backward through the graph a second time (or ...)"
    True
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import torch

__all__ = [
    "CUSTOM_RETURN_ERROR",
    "DEVICE_MISMATCH",
    "DTYPE_MISMATCH",
    "FREED_ERROR",
    "HOOK_ARITY_ERROR",
    "HOOK_CHANGED_ERROR",
    "INFERENCE_SAVED_ERROR",
    "INPLACE_VIEW_ERROR",
    "INTEGER_GRAD_ERROR",
    "LEAF_INPLACE_ERROR",
    "LEAF_INPLACE_TEXT",
    "NONSCALAR_ERROR",
    "NON_LEAF_FLAG_ERROR",
    "NO_GRAD_FN_ERROR",
    "NO_GRAD_FN_TEXT",
    "OVERLAPPING_WRITE_ERROR",
    "UNUSED_INPUT_ERROR",
    "VERSION_ERROR",
    "compiled_region",
    "node_creation_hook",
    "resumed_name",
]

# -- torch's error texts (2.13 and 2.14 wording) ------------------------------------------------

VERSION_ERROR = re.compile(
    r"modified by an inplace operation: \[(?P<type>[\w.]+) \[(?P<shape>[^\]]*)\]\]"
    r"(?:, which is output (?P<output>\d+) of (?P<grad_fn>[^,]+),)?"
    r" is at version (?P<now>\d+); expected version (?P<saved>\d+) instead"
)
"""A saved tensor was written in place after it was saved (``VariableVersion`` checks)."""

FREED_ERROR = "Trying to backward through the graph a second time"
"""A backward through a graph whose saved tensors an earlier backward freed."""

NONSCALAR_ERROR = "grad can be implicitly created only for scalar outputs"
"""``backward()`` without a gradient on a tensor of more than one element."""

NO_GRAD_FN_TEXT = "does not require grad and does not have a grad_fn"
NO_GRAD_FN_ERROR = re.compile(r"element (?P<index>\d+) of tensors " + NO_GRAD_FN_TEXT[:27])
"""``backward()`` on a tensor with no graph behind it (``index``: which root)."""

LEAF_INPLACE_TEXT = "leaf Variable that requires grad"
LEAF_INPLACE_ERROR = re.compile(
    r"a (?P<view>view of a )?leaf Variable that requires grad (?:is being|has been) used in an "
    r"in-place operation|leaf variable has been moved into the graph interior"
)
"""An in-place write on a leaf that requires grad (or a view of one)."""

INTEGER_GRAD_ERROR = re.compile(
    r"[Oo]nly Tensors of floating point (?:and complex )?dtype can require"
)
"""``requires_grad`` asked of an integer tensor."""

NON_LEAF_FLAG_ERROR = "you can only change requires_grad flags of leaf variables"
"""``requires_grad = False`` set on a tensor that is not a leaf."""

INPLACE_VIEW_ERROR = "of BackwardHookFunction is a view and is being modified inplace"
"""A full-hooked module's input or output written in place (TORCH-FACTS Q2)."""

HOOK_CHANGED_ERROR = re.compile(r"hook '([^']*)' has changed the (\w+) of value")
"""A tensor hook returned a gradient of another shape or type (groups: hook, what)."""

HOOK_ARITY_ERROR = re.compile(
    r"Backward (pre )?hook returned an invalid number of grad_(input|output), "
    r"got (\d+), but expected (\d+)"
)
"""A full backward (pre-)hook returned a tuple of the wrong length."""

INFERENCE_SAVED_ERROR = "Inference tensors cannot be saved for backward"
"""A tensor made under ``inference_mode`` used where autograd must save it."""

OVERLAPPING_WRITE_ERROR = "more than one element of the written-to tensor refers to a single memory"
"""An in-place write to an expanded tensor (the gradient of ``sum()``)."""


CUSTOM_RETURN_ERROR = re.compile(
    r"[Ff]unction (?P<name>\w+)Backward returned (?:"
    r"an incorrect number of gradients \(expected (?P<expected>\d+), got (?P<got>\d+)\)"
    r"|an invalid gradient at index (?P<index>\d+)"
    r"|a gradient different than None at position (?P<position>\d+))"
)
"""A custom Function's backward returned gradients that do not match its forward's inputs
(their number, a shape, a gradient for an input that is not a tensor)."""

DTYPE_MISMATCH = re.compile(
    r"same dtype|expected scalar type|dtype|BFloat16|Half|should be the same", re.IGNORECASE
)
"""An error about mixed floating types (float32 with bfloat16/float16)."""

DEVICE_MISMATCH = "Expected all tensors to be on the same device"
"""Tensors on different devices met in one op (a layer .to() never reached)."""

UNUSED_INPUT_ERROR = re.compile(
    r"(?:The differentiated Tensor at index (?P<index>\d+)|One of the differentiated "
    r"Tensors) appears to not have been used in the graph"
)
"""``autograd.grad`` was asked for the gradient of an input the outputs do not depend on."""


# -- version gates ------------------------------------------------------------------------------


def node_creation_hook() -> Callable[[Callable[[Any], None]], Any] | None:
    """``torch.autograd.graph.node_creation_hook`` (torch >= 2.14: every autograd node as it
    is made), or None on older torch."""
    return getattr(torch.autograd.graph, "node_creation_hook", None)


# -- torch.compile regions ------------------------------------------------------------------------

_MODULE_PATH = re.compile(r"""^L\['[^']*'\]\.?""")
_RESUMED = re.compile(r"torch_dynamo_resume_in_(\w+?)_at_(\d+)$")


def compiled_region(node: Any) -> dict[str, str]:
    """What a ``CompiledFunctionBackward`` node (a ``torch.compile`` region, aot backends)
    says of where it came from: ``forward`` (the compiled function, ``Net.forward``),
    ``source`` (``file.py:12``) and ``modules`` (the submodules whose operations it holds,
    ``fc1, fc2``); empty when torch keeps none of it.

    Read from private AOTAutograd state (checked on torch 2.13 and 2.14): the backward
    graph the node will run (``_lazy_backward_info.bw_module``, whose nodes carry
    ``fwd_nn_module_stack``) and the code objects dynamo traced (``saved_context.traced_code``).
    """
    found: dict[str, str] = {}
    try:
        info = node._forward_cls._lazy_backward_info
    except Exception:  # noqa: BLE001  (another torch, another backend)
        return found
    context = getattr(info, "saved_context", None)
    codes = getattr(context, "traced_code", None) or ()
    if codes:
        code = codes[0]
        qualname = str(getattr(code, "co_qualname", code.co_name)).rsplit("<locals>.", 1)[-1]
        found["forward"] = resumed_name(qualname, r"\1 after the graph break at line \2")
        found["source"] = f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno}"
    graph = getattr(getattr(info, "bw_module", None), "graph", None)
    modules: dict[str, None] = {}
    for fx_node in getattr(graph, "nodes", ()):
        meta = getattr(fx_node, "meta", {})
        stack = meta.get("fwd_nn_module_stack") or meta.get("nn_module_stack") or {}
        if isinstance(stack, dict) and stack:
            path = list(stack.values())[-1][0]
            if isinstance(path, str):
                modules[_MODULE_PATH.sub("", path) or path] = None
    if modules:
        found["modules"] = ", ".join(sorted(modules))
    return found


def resumed_name(name: str, template: str = r"\1") -> str:
    """The user's function behind a function dynamo made to resume after a graph break
    (``torch_dynamo_resume_in_forward_at_8`` -> ``forward``; ``template`` may also use the
    line, ``\2``); any other name unchanged."""
    return _RESUMED.sub(template, name)
