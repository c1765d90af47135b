"""GP137: the script failed on a ``.grad`` that was None.

``p.grad.zero_()`` on the first iteration, ``x.grad.abs()`` for a saliency map: a ``.grad``
read returns None and the next line fails with ``'NoneType' object has no attribute ...``.
The recorder notes every ``.grad`` read of a leaf that requires grad and returned None; when
the script then fails on None at that line, this says why the gradient was not there.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from gradprobe._blame import location
from gradprobe._recorder import Events, SourceLine
from gradprobe._source import traceback_location
from gradprobe.findings import Finding, LocationRole, make_finding

__all__ = ["none_grad_used"]

# findings that already say why this .grad is None
_EXPLAINED = frozenset({"GP106", "GP107", "GP136"})


def none_grad_used(
    events: Events, error: BaseException, findings: Sequence[Finding]
) -> list[Finding]:
    if not isinstance(error, (AttributeError, TypeError)) or "NoneType" not in str(error):
        return []
    failed = traceback_location(error.__traceback__)
    if failed is None:
        return []
    hit = next(
        (
            (read, seen)
            for read, seen in events.none_grad_reads.items()
            if read[1] == failed.line and _resolved(read[0]) == failed.file
        ),
        None,
    )
    if hit is None:
        return []
    read, (backwards, what, made, cut_id) = hit
    cut = events.cuts.get(cut_id) if cut_id is not None else None
    if backwards:
        if any(f.code in _EXPLAINED for f in findings):
            return []
        if cut is not None and cut.line is not None:
            why = (
                "backward() had run, but not through this tensor: the graph was cut from it "
                f"by {cut.op} at line {cut.line[1]}, so the loss computed from that result "
                "does not reach it. Compute from the tensor itself where you need its "
                "gradient."
            )
        else:
            why = (
                "backward() had run, but not through this tensor: the loss's graph does not "
                "contain it (it was not used, or a detach(), .data, torch.no_grad() or a "
                "non-differentiable op cut it off). gradprobe.leaf_report(gradprobe.trace("
                "loss), tensor) shows whether the loss reaches it."
            )
    else:
        cut = None
        why = (
            "no backward() had run yet, and .grad stays None until a backward reaches the "
            "tensor. Zeroing gradients by hand before the first backward is the usual "
            "cause: check `if p.grad is not None`, set `p.grad = None` instead, or zero "
            "after the update."
        )
    made_at = f" (made at line {made[1]})" if made else ""
    pairs: list[tuple[SourceLine | None, LocationRole]] = (
        [(cut.line, "cause"), (read, "read")] if cut is not None else [(read, "cause")]
    )
    pairs.append((made, "created"))
    return [
        make_finding(
            "GP137",
            message=(
                f"The script failed on the .grad of a {what}{made_at}, read at line "
                f"{read[1]}: it was None because {why}"
            ),
            locations=[loc for where, role in pairs if (loc := location(where, role))],
            details={"backward_calls_before": backwards},
        )
    ]


def _resolved(filename: str) -> str:
    return filename if filename.startswith("<") else str(Path(filename).resolve())
