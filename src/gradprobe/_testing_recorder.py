"""What an active ``gradprobe.record()`` knows, for the assertions of ``gradprobe.testing``.

An assertion called inside a recording (``with gradprobe.record():`` or the pytest marker)
attaches the recording's findings, which carry the source lines: the line that cut the
graph, the first NaN of the forward pass. The assertion's own tensor work runs with torch
function modes disabled (:func:`quiet`), so it does not show up in the user's recording.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

import torch

from gradprobe import _active
from gradprobe._source import line_location
from gradprobe.findings import Finding, Location

__all__ = [
    "active",
    "active_findings",
    "cut_locations",
    "quiet",
    "silent_writes",
    "unused_modules",
]

_CUT_KINDS = {
    "detach": ".detach()",
    "no_grad": "torch.no_grad()",
    "non_differentiable": "a non-differentiable operation",
    "parameter": "a new nn.Parameter made from a computed tensor",
}
_MAX_CUTS = 3


def active() -> Any:
    """The recording active in this thread, or None (never imports the recorder)."""
    return _active.current()


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Hide gradprobe's own tensor operations from an active recording."""
    if active() is None:
        yield
        return
    with torch._C.DisableTorchFunction():
        yield


def active_findings() -> list[Finding]:
    """Findings of the active recording so far (empty without one)."""
    recording = active()
    if recording is None:
        return []
    with quiet():
        return list(recording.snapshot())


def unused_modules(model: torch.nn.Module) -> set[str] | None:
    """Names of ``model``'s submodules the active recording never saw called; None when
    there is no recording or it saw no module of ``model`` at all (called elsewhere)."""
    recording = active()
    if recording is None:
        return None
    seen = {id(module) for module in recording.modules}
    named = list(model.named_modules())
    called = {name for name, module in named if id(module) in seen}
    if not called:
        return None
    return {name for name, _ in named if name not in called}


def cut_locations() -> list[tuple[str, Location]]:
    """Where the active recording saw a value that required grad lose it, oldest first:
    ``(how, location)`` pairs (``.item()`` reads are left out: they are usually logging)."""
    recording = active()
    if recording is None:
        return []
    cuts: Mapping[int, Any] = recording._events.cuts
    found: list[tuple[str, Location]] = []
    seen: set[Any] = set()
    for cut in sorted(cuts.values(), key=lambda c: c.order):
        how = _CUT_KINDS.get(cut.kind)
        if how is None or cut.line is None or cut.line in seen:
            continue
        seen.add(cut.line)
        location = line_location(cut.line, "cause")
        if location is not None:
            if cut.kind == "non_differentiable":
                how = f"{cut.op} (not differentiable)"
            found.append((how, location))
        if len(found) >= _MAX_CUTS:
            break
    return found


def silent_writes(roots: list[torch.Tensor]) -> list[Finding]:
    """GP108 from the active recording: saved tensors overwritten through an alias that
    does not bump the version counter (``.data``, numpy), which :func:`gradprobe.check`
    cannot see."""
    recording = active()
    if recording is None:
        return []
    from gradprobe.checks.saved_tensors import silent_findings

    with quiet():
        try:
            return list(silent_findings(recording._events, roots))
        except Exception:  # noqa: BLE001 - a partial recording must not break an assertion
            return []
