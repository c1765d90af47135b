"""Plain data and finding texts of the hook probe (see ``gradprobe.hooks._probe``).

What the probe records (:class:`Registration`, :class:`LegacyRecord`) holds names, shapes
and source lines only, never tensors or modules; the functions here turn it into findings.
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass, field
from types import FrameType, TracebackType
from typing import Any

import torch

from gradprobe._source import is_user_file, shown_file
from gradprobe.findings import Finding, Location, LocationRole, make_finding
from gradprobe.hooks._inventory import HookKind

__all__ = [
    "LegacyRecord",
    "Line",
    "Registration",
    "identify_slot",
    "legacy_finding",
    "legacy_global_finding",
    "line_of",
    "location",
    "shape_text",
    "shapes",
    "user_frames",
]

Line = tuple[str, int, str]  # (co_filename, line, function)
_TRANSPOSES = frozenset(("TBackward0", "TransposeBackward0", "PermuteBackward0"))


@dataclass
class Registration:
    """One hook registration seen while recording (plain data)."""

    index: int
    kind: HookKind
    module: str | None
    module_id: int | None
    hook: str
    line: Line | None
    composite: bool = False


@dataclass
class LegacyRecord:
    """What a legacy hook's module looked like at forward, and what the hook received."""

    node: str | None = None
    key: tuple[str, int] | None = None  # (name, sequence_nr): the recorder's key of the node
    slots: list[tuple[str, str]] = field(default_factory=list)  # (role, label)
    complete: bool = True
    received: tuple[tuple[int, ...] | None, ...] | None = None
    received_output: tuple[tuple[int, ...] | None, ...] | None = None
    batched: bool = False


def location(line: Line | None, role: LocationRole) -> Location | None:
    if line is None:
        return None
    filename, number, function = line
    return Location(
        file=shown_file(filename),
        line=number,
        role=role,
        function=function,
        text=_text(filename, number),
    )


def _text(filename: str, number: int) -> str | None:
    return linecache.getline(filename, number).strip() or None


def line_of(frame: FrameType | None) -> Line | None:
    if frame is None:
        return None
    return (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)


def shapes(values: Any) -> tuple[tuple[int, ...] | None, ...]:
    return tuple(
        tuple(value.shape) if isinstance(value, torch.Tensor) else None for value in values
    )


def as_list(shape: tuple[int, ...] | None) -> list[int] | None:
    return None if shape is None else list(shape)


def shape_text(shape: tuple[int, ...] | None) -> str:
    if shape is None:
        return "None"
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(str(size) for size in shape) + ")"


def user_frames(tb: TracebackType | None) -> list[FrameType]:
    """The user's frames of a traceback, outermost first."""
    frames: list[FrameType] = []
    while tb is not None:
        if is_user_file(tb.tb_frame.f_code.co_filename):
            frames.append(tb.tb_frame)
        tb = tb.tb_next
    return frames


def identify_slot(
    child: Any, tensors: list[tuple[int, torch.Tensor]], params: dict[int, str]
) -> tuple[str, str, int | None]:
    """What the gradient flowing into ``child`` is, seen from the module: (role, label, input)."""
    if child is None:
        return "none", "None", None
    for position, tensor in tensors:
        if tensor.grad_fn is not None and child is tensor.grad_fn:
            return "input", f"grad of input {position}", position
    variable = getattr(child, "variable", None)
    if isinstance(variable, torch.Tensor):
        name = params.get(id(variable))
        if name is not None:
            return "param", f"grad of {name}", None
        for position, tensor in tensors:
            if tensor is variable:
                return "input", f"grad of input {position}", position
        return "leaf", "grad of a leaf tensor", None
    if child.name() in _TRANSPOSES:
        below = [grand for grand, _ in child.next_functions if grand is not None]
        if len(below) == 1:
            variable = getattr(below[0], "variable", None)
            name = params.get(id(variable)) if variable is not None else None
            if name is not None:
                return "param_t", f"grad of {name}, transposed", None
    return "intermediate", f"grad of an intermediate value (the result of {child.name()})", None


def legacy_finding(registration: Registration, record: LegacyRecord) -> Finding:
    module = registration.module or "a module"
    cause = location(registration.line, "cause")
    locations = [cause] if cause is not None else []
    received = record.received
    parts: list[str] = []
    for index, (role, label) in enumerate(record.slots):
        shape = received[index] if received is not None and index < len(received) else None
        text = label if role == "none" else f"{label} {shape_text(shape)}"
        if role == "param" and label.endswith("bias") and record.batched:
            text += " [summed over the batch]"
        parts.append(text)
    layout = "(" + ", ".join(parts) + ")"
    details: dict[str, Any] = {
        "hook": registration.hook,
        "node": record.node,
        "grad_input": [
            {
                "role": role,
                "label": label,
                "shape": as_list(received[i] if received and i < len(received) else None),
            }
            for i, (role, label) in enumerate(record.slots)
        ],
        "grad_output_shapes": [as_list(shape) for shape in record.received_output or ()],
    }
    if record.node is None:
        message = (
            f"{module} has a legacy backward hook ({registration.hook}, registered with "
            "register_backward_hook); the module was not run with grad enabled while "
            "recording, so the hook never fired."
        )
        code = "GP302" if registration.composite else "GP301"
    elif record.complete:
        code = "GP301"
        message = (
            f"{module} has a legacy backward hook ({registration.hook}); it is attached to "
            f"{record.node}, the last autograd node of the module's forward, and receives "
            f"grad_input = {layout}."
        )
        if any(role == "param_t" for role, _ in record.slots):
            message += " The weight gradient arrives transposed."
    else:
        code = "GP302"
        message = (
            f"{module} has a legacy backward hook ({registration.hook}); it is attached to "
            f"{record.node}, only the last operation of the module's forward, and receives "
            f"grad_input = {layout} instead of the gradients of the module's inputs."
        )
    return make_finding(
        code,
        message=message,
        module=module,
        node=record.node,
        locations=locations,
        details=details,
    )


def legacy_global_finding(registration: Registration) -> Finding:
    cause = location(registration.line, "cause")
    return make_finding(
        "GP301",
        message=(
            f"{registration.hook} was registered for every module with the legacy "
            "register_module_backward_hook: each module's hook sees only its last autograd node."
        ),
        locations=[cause] if cause is not None else [],
        details={"hook": registration.hook},
    )
