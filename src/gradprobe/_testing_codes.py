"""Findings and message text for :mod:`gradprobe.testing` (codes GP107, GP120, GP121...)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gradprobe.findings import Finding, Location, make_finding

__all__ = [
    "LEAF_HINTS",
    "compose",
    "finding",
    "indent",
    "nonleaf_message",
    "short",
    "where",
]


def finding(
    code: str,
    *,
    message: str,
    hint: str | None = None,
    tensor: str | None = None,
    node: str | None = None,
    parameter: str | None = None,
    locations: tuple[Location, ...] = (),
    details: Mapping[str, Any] | None = None,
) -> Finding:
    """A finding for registered ``code`` with this occurrence's message."""
    return make_finding(
        code,
        message=message,
        hint=hint,
        tensor=tensor,
        node=node,
        parameter=parameter,
        locations=locations,
        details=details,
    )


# -- message text shared by the assertions -----------------------------------------------------

LEAF_HINTS = {
    "ToCopyBackward0": (
        "A .to(), .cuda(), .double() or .float() after requires_grad=True made a copy; create "
        "the tensor with its final dtype and device (torch.tensor(..., dtype=..., device=..., "
        "requires_grad=True)) or call .requires_grad_() after the conversion."
    ),
}


def nonleaf_message(name: str, node: str) -> str:
    return (
        f"{name!r} is not a leaf: it was produced by {node}, so autograd does not fill its "
        ".grad (the gradient goes to the leaf it was computed from)."
    )


def compose(title: str, lines: Sequence[str], findings: Sequence[Finding]) -> str:
    parts = [title, *lines]
    seen: set[str] = set()
    fixes: list[str] = []
    for item in findings:
        if item.code in seen:
            continue
        seen.add(item.code)
        fixes.append(f"  {item.code} {item.kind}: {item.hint} (see: {item.read_more})")
    if fixes:
        parts.append("what to do:")
        parts.extend(fixes)
    return "\n".join(parts)


def where(location: Any) -> str:
    where = str(location.where)
    if location.function:
        where += f" in {location.function}"
    if location.text:
        where += f": {location.text}"
    return where


def indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def short(location: Location) -> str:
    return f"{Path(location.file).name}:{location.line}"
