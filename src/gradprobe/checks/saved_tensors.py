"""Saved tensors: what backward would read was overwritten after it was saved.

GP101/GP109/GP112 name the write that moved a saved tensor's version counter (before
``backward()`` raises, and again when it has raised); GP108 names a write through ``.data``
or numpy, which moves no version counter, so backward silently uses the new values.
"""

from __future__ import annotations

from collections.abc import Iterable

from gradprobe import _blame
from gradprobe.check import parse_version_error
from gradprobe.checks._api import BackwardCall, Check, register
from gradprobe.findings import Finding

__all__ = ["OverwrittenSaves"]


@register
class OverwrittenSaves(Check):
    """Saved tensors overwritten between forward and backward."""

    name = "gradprobe.saved_tensors"
    codes = ("GP101", "GP103", "GP108", "GP109", "GP112")

    def on_backward(self, call: BackwardCall) -> Iterable[Finding]:
        # cheap unless a recorded write touched memory some node saved
        return _blame.before_backward(call.run.events, call.roots)

    def on_backward_error(self, call: BackwardCall) -> Iterable[Finding]:
        if call.error is None or parse_version_error(str(call.error)) is None:
            return ()
        return _blame.stale_findings(call.run.events, call.roots)
