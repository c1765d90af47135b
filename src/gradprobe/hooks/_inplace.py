"""GP309: a tensor hook changed the gradient it was given in place.

A hook registered with ``Tensor.register_hook`` must not modify its argument; it returns a
new gradient instead. The gradient it receives may be shared: the gradient of a ``sum()``
is one value expanded over the whole shape (an in-place write then fails with "more than
one element of the written-to tensor refers to a single memory location"), and an addition
hands the same gradient tensor to both of its inputs, so writing to it can change the
other branch's gradient as well. The recorder notes in-place ops run directly in the code
of a tensor hook registered during the recording.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from gradprobe.findings import Finding, Location, make_finding

__all__ = ["hook_writes"]


def hook_writes(
    writes: dict[str, tuple[Any, bool]],
    hooks: Mapping[str, tuple[Any, ...]],
    locate: Callable[[Any, Any], Location | None],
) -> list[Finding]:
    """``writes``: hook name -> (line, whether the write failed); ``hooks``: hook name ->
    (register line, return line), both from the recording."""
    found: list[Finding] = []
    for name, (line, failed) in list(writes.items())[:3]:
        registered = hooks.get(name, (None, None))[0]
        effect = (
            "backward() failed because the gradient was an expanded tensor (the gradient "
            "of a sum() or mean() is one value broadcast over the shape)"
            if failed
            else "autograd may hand the same gradient tensor to other tensors too (an "
            "addition passes it to both of its inputs), so their gradients can change with "
            "it"
        )
        found.append(
            make_finding(
                "GP309",
                message=(
                    f"The tensor hook {name!r} wrote to the gradient it was given in place"
                    f"{f' at line {line[1]}' if line else ''}: {effect}. A hook must not "
                    "modify its argument; return the new gradient instead (return grad * 0.5 "
                    "rather than grad.mul_(0.5))."
                ),
                locations=[
                    loc
                    for loc in (locate(line, "cause"), locate(registered, "registered"))
                    if loc is not None
                ],
                details={"hook": name, "failed": failed},
            )
        )
    return found
