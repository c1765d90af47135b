"""torch warned and went on: the warnings of the catalogue that mean a bug become GP169.

Some of torch's mistakes are warnings, not errors: a reentrant checkpoint with no input that
requires grad ("Gradients will be None"), a parameter listed twice in an optimizer, a scheduler
stepped before its optimizer, get_lr() read outside step(). The run goes on and
trains wrongly; the warning scrolls past in the log. This check hears every warning shown while
recording (Python's warning machinery hands each one to ``warnings._showwarnmsg``, which it
wraps and undoes at the end), keeps those of the catalogue's warning entries
(:mod:`gradprobe.checks._catalogue.warned`) and names the line to change by the entry's blame
rule, read right then from the user's frame: the line that warned, or where the argument it
was given was built.

Warnings correct code also triggers (deprecations, performance hints, debugging aids) have no
entry (:mod:`gradprobe.checks._torch_messages` lists each with the reason), and warnings the
user filtered out never reach the check. Silent where torch's warning is wrong by design: the
scheduler-before-optimizer warning fires when a GradScaler skipped the first step on purpose.
"""

from __future__ import annotations

import contextlib
import linecache
import re
import sys
import threading
import warnings
from collections.abc import Iterable
from types import FrameType
from typing import Any

import torch

from gradprobe._patch import Patches
from gradprobe._recorder import SourceLine
from gradprobe._source import is_user_file
from gradprobe.checks._api import Check, Run, register
from gradprobe.checks._blame import provenance
from gradprobe.checks._catalogue import Entry, warned_entry
from gradprobe.checks._common import _locations
from gradprobe.errors import error_text
from gradprobe.findings import Finding, LocationRole, make_finding

__all__ = ["TorchWarning"]

_WARN_CALL = re.compile(r"\bwarn(?:_explicit)?\(")
_MAX_FINDINGS = 32  # one run repeating a warning in a loop still gives a short report


@register
class TorchWarning(Check):
    """A warning of torch that means a bug (GP169), at the line to change."""

    name = "gradprobe.errors.warned"
    codes = ("GP169",)

    def __init__(self) -> None:
        self._patches = Patches()
        self._lock = threading.Lock()
        self._found: dict[tuple[str, SourceLine | None, SourceLine], Finding] = {}

    def start(self, run: Run) -> None:
        shown = getattr(warnings, "_showwarnmsg", None)
        if shown is None:  # a Python without the hook: nothing is heard, nothing breaks
            return
        patches = self._patches

        def showwarnmsg(message: warnings.WarningMessage) -> None:
            if patches.targets():
                with contextlib.suppress(Exception):  # the warning reaches the user regardless
                    self._hear(run, message)
            shown(message)

        patches.set(warnings, "_showwarnmsg", showwarnmsg)

    def stop(self) -> None:
        self._patches.undo()

    def conclude(self, run: Run) -> Iterable[Finding]:
        with self._lock:
            found, self._found = list(self._found.values()), {}
        return found

    def _hear(self, run: Run, message: warnings.WarningMessage) -> None:
        said = message.message
        entry = warned_entry(error_text(said) if isinstance(said, Warning) else str(said))
        if entry is None or len(self._found) >= _MAX_FINDINGS:
            return
        frame = _user_frame(sys._getframe(2))
        if frame is None or _own_warning(frame):
            return
        warned: SourceLine = (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
        if entry.key == "scheduler_before_optimizer" and _scaled(frame):
            return  # a GradScaler skipped the first step on purpose (an inf in fp16)
        cause = provenance(entry.blame, frame, warned[1], run.events.nodes)
        if cause is None:
            cause = warned
        key = (entry.key, cause, warned)
        with self._lock:
            if key not in self._found:
                self._found[key] = _finding(entry, str(message.message), cause, warned)


def _finding(entry: Entry, text: str, cause: SourceLine, warned: SourceLine) -> Finding:
    pairs: list[tuple[SourceLine | None, LocationRole]] = [(cause, "cause")]
    if warned != cause:
        pairs.append((warned, "warned"))
    return make_finding(
        "GP169",
        message=f"torch warned: {text.splitlines()[0][:300]}\n{entry.meaning}",
        hint=entry.fix,
        details={"entry": entry.key, "text": text[:300]},
        locations=tuple(_locations(*pairs)),
    )


def _user_frame(frame: FrameType | None) -> FrameType | None:
    """The innermost frame of the user's code on the stack that warned."""
    while frame is not None and not is_user_file(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def _own_warning(frame: FrameType) -> bool:
    """Whether the user's line itself calls ``warnings.warn`` (their own warning, whatever
    its text): torch's warnings reach Python from a torch frame or from torch's C++ code
    under the line that called into it."""
    text = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
    return _WARN_CALL.search(text) is not None


def _scaled(frame: FrameType | None) -> bool:
    """Whether an enabled GradScaler is in reach of the stack that warned."""
    scaler = getattr(torch.amp, "GradScaler", None)
    if scaler is None:
        return False
    while frame is not None:
        for scope in (frame.f_locals, frame.f_globals):
            if any(_enabled(value, scaler) for value in list(scope.values())):
                return True
        frame = frame.f_back
    return False


def _enabled(value: Any, scaler: type) -> bool:
    return isinstance(value, scaler) and bool(getattr(value, "is_enabled", bool)())
