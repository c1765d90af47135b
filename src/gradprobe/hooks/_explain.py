"""What a module's backward hooks really receive: :func:`explain`.

A legacy ``register_backward_hook`` is attached to the *last autograd node* the module's
forward creates (TORCH-FACTS Q1/Q3), so its ``grad_input`` is that node's input gradients
in that node's argument order: ``(bias, input, weight.T)`` for ``nn.Linear`` on 2-D input,
one ``(B*T, out)`` view gradient for ``nn.Linear`` on 3-D input, ``(input, weight, bias)``
for convolutions, and the last operation only for composite modules. Rather than a table
of known modules, :func:`explain` runs a copy of the module on example inputs with such a
hook, runs the backward pass, and identifies every tensor the hook received by comparing it
with the inputs' ``.grad``, each parameter's ``.grad`` and ``.grad.T``, the gradient of each
submodule's output and the output gradient itself. A second copy gets a
``register_full_backward_hook`` to show what that gives instead.
"""

from __future__ import annotations

import contextlib
import copy
import warnings
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import torch
import torch.nn.modules.module as torch_module

from gradprobe._compat import INPLACE_VIEW_ERROR, LEAF_INPLACE_TEXT
from gradprobe.errors import GradprobeTypeError, GradprobeValueError, describe, error_text
from gradprobe.findings import Finding, make_finding
from gradprobe.hooks._names import internal

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

__all__ = ["INPLACE_VIEW_ERROR", "GradSlot", "HookLayout", "SlotRole", "explain"]

SlotRole = Literal["input", "param", "param_t", "output", "intermediate", "none", "unknown"]
"""What one element of ``grad_input`` / ``grad_output`` is: the gradient of a module input,
of a parameter, of a parameter transposed (``param_t``), of the module output (possibly
reshaped), of a value inside the module (``intermediate``), ``None``, or not identified."""


_GLOBAL_TABLES = (
    "_global_forward_pre_hooks",
    "_global_forward_hooks",
    "_global_forward_hooks_with_kwargs",
    "_global_forward_hooks_always_called",
    "_global_backward_pre_hooks",
    "_global_backward_hooks",
)


@dataclass(frozen=True)
class GradSlot:
    """One element of a hook's ``grad_input`` or ``grad_output``, identified."""

    index: int
    shape: tuple[int, ...] | None
    role: SlotRole
    label: str
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"index", "shape", "role", "label", "note"}``."""
        return {
            "index": self.index,
            "shape": None if self.shape is None else list(self.shape),
            "role": self.role,
            "label": self.label,
            "note": self.note,
        }

    def __str__(self) -> str:
        if self.shape is None:
            return "None"
        return f"{self.label} {_shape(self.shape)}"


@dataclass(frozen=True)
class HookLayout:
    """What :func:`explain` found: the legacy hook's view, and the full hook's.

    ``node`` is the last autograd node of the module's forward (where the legacy hook is
    attached). ``legacy_complete`` is True when the legacy ``grad_input`` covers every
    input that requires grad and nothing but inputs and parameters.
    """

    module: str
    input_shapes: tuple[tuple[int, ...] | None, ...]
    output_shapes: tuple[tuple[int, ...], ...]
    node: str | None
    legacy_grad_input: tuple[GradSlot, ...]
    legacy_grad_output: tuple[GradSlot, ...]
    full_grad_input: tuple[GradSlot, ...]
    full_grad_output: tuple[GradSlot, ...]
    legacy_fired: bool
    full_fired: bool
    legacy_warning: str | None = None
    legacy_error: str | None = None
    full_warning: str | None = None
    full_error: str | None = None
    findings: tuple[Finding, ...] = field(default=())

    @property
    def legacy_complete(self) -> bool:
        """The legacy hook sees each input's grad and nothing from inside the module."""
        if not self.legacy_fired:
            return False
        roles = {slot.role for slot in self.legacy_grad_input}
        if roles & {"intermediate", "output", "unknown"}:
            return False
        needed = {slot.label for slot in self.full_grad_input if slot.role == "input"}
        seen = {slot.label for slot in self.legacy_grad_input if slot.role == "input"}
        return needed <= seen

    def summary(self) -> str:
        """One sentence: what the legacy hook gets, and what the full hook gets instead."""
        if not self.legacy_fired:
            legacy = "a legacy backward hook is never called"
        else:
            parts = _tuple_text(self.legacy_grad_input)
            legacy = f"a legacy backward hook gets grad_input = {parts} from {self.node}"
            if not self.legacy_complete:
                legacy += " (the last operation only)"
        if self.full_error is not None:
            full = "a full backward hook makes the forward fail"
        elif not self.full_fired:
            full = "a full backward hook is never called"
        else:
            parts = _tuple_text(self.full_grad_input)
            full = f"a full backward hook gets grad_input = {parts}"
        return f"{self.module}: {legacy}; {full}."

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: every field, slots as dicts, findings as dicts."""
        return {
            "module": self.module,
            "input_shapes": [None if s is None else list(s) for s in self.input_shapes],
            "output_shapes": [list(s) for s in self.output_shapes],
            "node": self.node,
            "legacy_grad_input": [slot.to_dict() for slot in self.legacy_grad_input],
            "legacy_grad_output": [slot.to_dict() for slot in self.legacy_grad_output],
            "full_grad_input": [slot.to_dict() for slot in self.full_grad_input],
            "full_grad_output": [slot.to_dict() for slot in self.full_grad_output],
            "legacy_fired": self.legacy_fired,
            "full_fired": self.full_fired,
            "legacy_complete": self.legacy_complete,
            "legacy_warning": self.legacy_warning,
            "legacy_error": self.legacy_error,
            "full_warning": self.full_warning,
            "full_error": self.full_error,
            "findings": [finding.to_dict() for finding in self.findings],
        }

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from gradprobe.render.hooks import layout_view

        yield layout_view(self)

    def __str__(self) -> str:
        from gradprobe.render.text import to_text

        return to_text(self)

    def _repr_html_(self) -> str:
        """The two hooks' ``grad_input`` as HTML tables, for notebooks."""
        from gradprobe.render.hooks import layout_view
        from gradprobe.render.html_report import to_html

        return to_html(layout_view(self))

    def __repr__(self) -> str:
        return f"<HookLayout {self.module}: legacy hook sees {self.node}>"


def _tuple_text(slots: Sequence[GradSlot]) -> str:
    items = [str(slot) for slot in slots]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _shape(shape: tuple[int, ...]) -> str:
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(str(size) for size in shape) + ")"


@contextlib.contextmanager
def _without_global_hooks() -> Iterator[None]:
    """Global module hooks would fire on our copies: park them for the duration."""
    saved = {name: getattr(torch_module, name) for name in _GLOBAL_TABLES}
    full = torch_module._global_is_full_backward_hook
    try:
        for name in _GLOBAL_TABLES:
            setattr(torch_module, name, OrderedDict())
        torch_module._global_is_full_backward_hook = None
        yield
    finally:
        for name, table in saved.items():
            setattr(torch_module, name, table)
        torch_module._global_is_full_backward_hook = full


def _clean_copy(module: torch.nn.Module) -> torch.nn.Module:
    try:
        clone = copy.deepcopy(module)
    except Exception as error:
        msg = (
            f"explain() runs a copy of the module so that the original's .grad and hooks stay "
            f"untouched, but copy.deepcopy({type(module).__name__}) failed: {error}. Explain "
            "a module that can be deep-copied (e.g. a freshly built one of the same shape)."
        )
        raise GradprobeValueError(msg) from error
    for sub in clone.modules():
        for table in (
            "_forward_pre_hooks",
            "_forward_pre_hooks_with_kwargs",
            "_forward_hooks",
            "_forward_hooks_with_kwargs",
            "_forward_hooks_always_called",
            "_backward_pre_hooks",
            "_backward_hooks",
        ):
            found = getattr(sub, table, None)
            if found is not None:
                found.clear()
        sub._is_full_backward_hook = None
    for param in clone.parameters():
        param.grad = None
    return clone


def _default_inputs(module: torch.nn.Module) -> tuple[torch.Tensor, ...]:
    param = next(module.parameters(), None)
    dtype = param.dtype if param is not None and param.is_floating_point() else torch.float32
    device = param.device if param is not None else torch.device("cpu")
    batch = 4
    if isinstance(module, torch.nn.Linear):
        shape: tuple[int, ...] = (batch, module.in_features)
    elif isinstance(module, torch.nn.modules.conv._ConvNd):
        dims = len(module.kernel_size)
        spatial = []
        for axis in range(dims):
            padding = module.padding[axis] if isinstance(module.padding, tuple) else 0
            reach = module.dilation[axis] * (module.kernel_size[axis] - 1) + 1
            spatial.append(max(reach - 2 * int(padding), 1) + 4)
        shape = (batch, module.in_channels, *spatial)
    elif isinstance(module, torch.nn.Bilinear):
        return (
            torch.randn(batch, module.in1_features, dtype=dtype, device=device),
            torch.randn(batch, module.in2_features, dtype=dtype, device=device),
        )
    else:
        msg = (
            f"explain() needs example inputs for {type(module).__name__}: it runs the module "
            "to see what its hooks receive. Pass them after the module, e.g. "
            "explain(model, torch.randn(8, 3, 32, 32))."
        )
        raise GradprobeValueError(msg)
    return (torch.randn(*shape, dtype=dtype, device=device),)


def _tensors_of(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [item for inner in value for item in _tensors_of(inner)]
    if isinstance(value, dict):
        return [item for inner in value.values() for item in _tensors_of(inner)]
    return []


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    # Both sides come from the same backward pass; tolerance only covers a different
    # summation order (weight.T computed as (x^T g)^T versus g^T x).
    return bool(torch.allclose(a, b, rtol=1e-5, atol=1e-6))


class _Candidates:
    """Named gradients a received tensor can be: inputs, parameters, insides, outputs."""

    def __init__(self) -> None:
        self.items: list[tuple[SlotRole, str, torch.Tensor, str | None]] = []

    def add(self, role: SlotRole, label: str, grad: torch.Tensor, note: str | None = None) -> None:
        self.items.append((role, label, grad, note))

    def identify(self, index: int, grad: Any, fallback: str | None) -> GradSlot:
        if grad is None:
            return GradSlot(index, None, "none", "None")
        if not isinstance(grad, torch.Tensor):
            return GradSlot(index, None, "unknown", type(grad).__name__)
        shape = tuple(grad.shape)
        for role, label, value, note in self.items:
            if _same(grad, value):
                return GradSlot(index, shape, role, label, note)
        for role, label, value, note in self.items:
            reshaped = role == "output" and grad.numel() == value.numel()
            if reshaped and grad.shape != value.shape and _same(grad, value.reshape(grad.shape)):
                return GradSlot(index, shape, "output", f"{label}, reshaped", note)
        if fallback is not None:
            return GradSlot(index, shape, "intermediate", fallback)
        return GradSlot(index, shape, "unknown", "not identified")


def _run(
    module: torch.nn.Module,
    inputs: Sequence[Any],
    grads: list[torch.Tensor] | None,
    *,
    full: bool,
    non_leaf: bool = False,
) -> dict[str, Any]:
    """Forward and backward through a clean copy with one kind of hook; plain results."""
    clone = _clean_copy(module)
    received: dict[str, Any] = {}

    def legacy_hook(mod: Any, grad_input: Any, grad_output: Any) -> None:
        received.setdefault("grad_input", tuple(grad_input))
        received.setdefault("grad_output", tuple(grad_output))

    inside: list[tuple[str, torch.Tensor]] = []

    def keep(path: str) -> Any:
        def forward_hook(mod: Any, args: Any, output: Any) -> None:
            for tensor in _tensors_of(output):
                if tensor.requires_grad and tensor.grad_fn is not None:
                    with contextlib.suppress(RuntimeError):
                        tensor.retain_grad()
                        inside.append((f"{path} ({type(mod).__name__})", tensor))

        return forward_hook

    if full:
        clone.register_full_backward_hook(legacy_hook)
    else:
        clone.register_backward_hook(legacy_hook)
        for path, sub in clone.named_modules():
            if path:
                sub.register_forward_hook(keep(path))
    leaves = [
        value.detach().clone().requires_grad_(value.requires_grad)
        if isinstance(value, torch.Tensor)
        else value
        for value in inputs
    ]
    args: list[Any] = list(leaves)
    if non_leaf:
        # The module writes its input in place, which a leaf refuses: feed it `x * 1`
        # (the leaf's .grad is still the gradient of the value the module received).
        args = [
            value * 1 if isinstance(value, torch.Tensor) and value.requires_grad else value
            for value in leaves
        ]
    result: dict[str, Any] = {"inputs": leaves, "inside": inside, "clone": clone}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            output = clone(*args)
        except RuntimeError as error:
            if not non_leaf and LEAF_INPLACE_TEXT in error_text(error):
                return _run(module, inputs, grads, full=full, non_leaf=True)
            result["error"] = error_text(error)
            result["warnings"] = [str(w.message) for w in caught]
            return result
        result["non_leaf"] = non_leaf
        outputs = [t for t in _tensors_of(output) if t.requires_grad]
        result["output_type"] = type(output)
        result["outputs"] = outputs
        result["node"] = _legacy_node(output)
        if grads is None:
            grads = [torch.randn_like(t) for t in outputs]
        result["grads"] = grads
        if outputs:
            torch.autograd.backward(outputs, grad_tensors=grads)
        result["warnings"] = [str(w.message) for w in caught]
    result.update(received)
    return result


def _legacy_node(output: Any) -> Any:
    """The node a legacy hook is attached to: the first tensor's grad_fn (module.py)."""
    var = output
    for _ in range(32):
        if isinstance(var, torch.Tensor):
            return var.grad_fn
        if isinstance(var, dict):
            var = next((v for v in var.values() if isinstance(v, torch.Tensor)), None)
        elif isinstance(var, (tuple, list)) and var:
            var = var[0]
        else:
            return None
    return None


def _candidates(run: dict[str, Any]) -> _Candidates:
    found = _Candidates()
    tensor_inputs = [value for value in run["inputs"] if isinstance(value, torch.Tensor)]
    position = 0
    for value in run["inputs"]:
        if isinstance(value, torch.Tensor):
            if value.requires_grad and value.grad is not None:
                found.add("input", f"grad of input {position}", value.grad)
            position += 1
    batched = any(t.dim() >= 2 for t in tensor_inputs)
    clone: torch.nn.Module = run["clone"]
    for name, param in clone.named_parameters():
        if param.grad is None:
            continue
        short = name.rsplit(".", 1)[-1]
        note = "summed over the batch, not per-sample" if short == "bias" and batched else None
        if param.dim() == 2:
            # First: a symmetric gradient matches both, and a legacy hook on Linear really
            # receives the transposed one (addmm's weight.t()).
            found.add("param_t", f"grad of {name}, transposed", param.grad.T)
        found.add("param", f"grad of {name}", param.grad, note)
    for label, tensor in run.get("inside", []):
        if tensor.grad is not None:
            found.add("intermediate", f"grad of the output of {label}", tensor.grad)
    outputs = run.get("outputs", [])
    for k, grad in enumerate(run.get("grads") or []):
        label = "grad of the output" if len(outputs) == 1 else f"grad of output {k}"
        found.add("output", label, grad)
    return found


def _warning(run: dict[str, Any], needle: str) -> str | None:
    return next((text for text in run.get("warnings", []) if needle in text), None)


def _layout_findings(
    module: torch.nn.Module, layout: HookLayout, output_type: type | None
) -> tuple[Finding, ...]:
    """Problems with the hooks the module carries now."""
    name = type(module).__name__
    found: list[Finding] = []
    if module._backward_hooks and module._is_full_backward_hook is False:
        if layout.legacy_complete:
            found.append(
                make_finding(
                    "GP301",
                    message=(
                        f"This {name} has a legacy backward hook. It receives the grad_input of "
                        f"{layout.node}: {_tuple_text(layout.legacy_grad_input)}."
                    ),
                    module=name,
                    node=layout.node,
                )
            )
        else:
            found.append(
                make_finding(
                    "GP302",
                    message=(
                        f"This {name} has a legacy backward hook, which sees only its last "
                        f"operation, {layout.node}: grad_input = "
                        f"{_tuple_text(layout.legacy_grad_input)}, not the gradient "
                        "of the module's inputs."
                    ),
                    module=name,
                    node=layout.node,
                )
            )
    full = bool(module._backward_pre_hooks) or bool(
        module._backward_hooks and module._is_full_backward_hook is True
    )
    if full and layout.full_error is not None and INPLACE_VIEW_ERROR in layout.full_error:
        found.append(
            make_finding(
                "GP305",
                message=(
                    f"This {name} has a full backward hook and modifies a hooked tensor in place "
                    "in its forward, which raises PyTorch's 'BackwardHookFunction is a view' "
                    "error."
                ),
                module=name,
            )
        )
    if full and output_type is not None and not issubclass(output_type, (torch.Tensor, tuple)):
        found.append(
            make_finding(
                "GP306",
                message=(
                    f"This {name} returns a {output_type.__name__}, so its full backward hooks "
                    "are never called."
                ),
                module=name,
            )
        )
    none_only = all(slot.role == "none" for slot in layout.full_grad_input)
    if full and layout.full_fired and layout.full_grad_input and none_only:
        found.append(
            make_finding(
                "GP303",
                message=(
                    f"With these inputs no input of this {name} requires grad, so its full "
                    "backward hooks receive grad_input = "
                    f"({', '.join('None' for _ in layout.full_grad_input)},)."
                ),
                module=name,
            )
        )
    return tuple(found)


def explain(module: torch.nn.Module, *example_inputs: Any) -> HookLayout:
    """What ``register_backward_hook`` (legacy) and ``register_full_backward_hook`` on
    ``module`` really receive, found by running copies of it.

    Args:
        module: the module to explain. It is deep-copied; the original's parameters,
            ``.grad`` and hooks are not touched, and global module hooks are parked while
            the copies run.
        example_inputs: positional inputs for ``module``; tensors keep their
            ``requires_grad`` (pass one that does not require grad to see the ``None``
            entries). Optional for ``nn.Linear``, ``nn.Bilinear`` and convolutions (a batch
            of 4 random inputs). Runs with the global RNG state restored afterwards.

    Returns:
        A :class:`HookLayout`. ``legacy_grad_input`` lists each tensor the legacy hook got
        with its role and a label such as ``grad of weight, transposed``; ``findings``
        holds GP301/GP302 when the module carries a legacy hook now, GP305/GP306/GP303
        when it carries full hooks that fail, never fire or see ``None``.

    Example:
        >>> import torch
        >>> from gradprobe.hooks import explain
        >>> layout = explain(torch.nn.Conv2d(2, 4, 3))
        >>> [str(slot) for slot in layout.legacy_grad_input]
        ['grad of input 0 (4, 2, 7, 7)', 'grad of weight (4, 2, 3, 3)', 'grad of bias (4,)']
        >>> layout.node, layout.legacy_complete
        ('ConvolutionBackward0', True)
    """
    given: object = module
    if not isinstance(given, torch.nn.Module):
        msg = (
            f"explain() shows what the backward hooks of an nn.Module receive, got "
            f"{describe(given)}. Pass a module: explain(torch.nn.Linear(3, 5))."
        )
        raise GradprobeTypeError(msg)
    with torch.random.fork_rng(devices=[]), _without_global_hooks(), torch.enable_grad():
        torch.manual_seed(0)
        inputs: tuple[Any, ...]
        if example_inputs:
            inputs = tuple(example_inputs)
        else:
            inputs = tuple(t.requires_grad_(True) for t in _default_inputs(module))
        if not any(isinstance(value, torch.Tensor) for value in inputs):
            msg = (
                f"explain() needs at least one tensor among the example inputs of "
                f"{type(module).__name__}, got {describe(inputs)}."
            )
            raise GradprobeValueError(msg)
        with internal():
            legacy = _run(module, inputs, None, full=False)
            full = _run(module, inputs, legacy.get("grads"), full=True)
        return _layout(module, inputs, legacy, full)


def _layout(
    module: torch.nn.Module,
    inputs: Sequence[Any],
    legacy: dict[str, Any],
    full: dict[str, Any],
) -> HookLayout:
    node = legacy.get("node")
    legacy_slots: tuple[GradSlot, ...] = ()
    legacy_out: tuple[GradSlot, ...] = ()
    if "grad_input" in legacy:
        found = _candidates(legacy)
        nexts = list(node.next_functions) if node is not None else []
        slots = []
        for index, grad in enumerate(legacy["grad_input"]):
            below = nexts[index][0] if index < len(nexts) else None
            fallback = (
                f"grad of an intermediate value (the result of {below.name()})"
                if below is not None
                else "grad of an intermediate value"
            )
            slots.append(found.identify(index, grad, fallback))
        legacy_slots = tuple(slots)
        legacy_out = tuple(
            found.identify(index, grad, None) for index, grad in enumerate(legacy["grad_output"])
        )
    full_slots: tuple[GradSlot, ...] = ()
    full_out: tuple[GradSlot, ...] = ()
    if "grad_input" in full:
        found = _candidates(full)
        full_slots = tuple(
            found.identify(index, grad, None) for index, grad in enumerate(full["grad_input"])
        )
        full_out = tuple(
            found.identify(index, grad, None) for index, grad in enumerate(full["grad_output"])
        )
    outputs = legacy.get("outputs") or full.get("outputs") or []
    layout = HookLayout(
        module=type(module).__name__,
        input_shapes=tuple(
            tuple(value.shape) if isinstance(value, torch.Tensor) else None for value in inputs
        ),
        output_shapes=tuple(tuple(t.shape) for t in outputs),
        node=node.name() if node is not None else None,
        legacy_grad_input=legacy_slots,
        legacy_grad_output=legacy_out,
        full_grad_input=full_slots,
        full_grad_output=full_out,
        legacy_fired="grad_input" in legacy,
        full_fired="grad_input" in full,
        legacy_warning=_warning(legacy, "non-full backward hook"),
        legacy_error=legacy.get("error"),
        full_warning=_warning(full, "backward hook"),
        full_error=full.get("error"),
    )
    output_type = legacy.get("output_type") or full.get("output_type")
    findings = _layout_findings(module, layout, output_type)
    if findings:
        layout = HookLayout(**{**layout.__dict__, "findings": findings})
    return layout
