"""Errors a DataLoader worker process raised, read back in the process that iterated.

A worker runs unrecorded (another process), and torch re-raises its exception in the main
process with the worker's traceback as text ("Caught RuntimeError in DataLoader worker
process 0. Original Traceback ..."). The line to change is inside the worker: the innermost
frame of the user's code in that text (the dataset's ``__getitem__``, a ``collate_fn``); when
the worker failed in torch's own collation without a user frame (a sample that requires
grad cannot be stacked with ``out=`` nor sent across processes), the ``return`` of the
dataset's ``__getitem__``, the code that handed torch that sample.
"""

from __future__ import annotations

import re
from types import FrameType

from gradprobe._recorder import SourceLine
from gradprobe._source import is_user_file
from gradprobe.checks._blame import named_values, return_of

__all__ = ["WorkerError", "worker_error"]

_CAUGHT = re.compile(r"Caught \w+ in DataLoader worker process \d+\.\nOriginal Traceback")
_FRAME = re.compile(
    r'^  File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<function>\S+)', re.MULTILINE
)


class WorkerError:
    """What the text of a re-raised worker error carries."""

    def __init__(self, text: str) -> None:
        lines = [line for line in text.rstrip().splitlines() if line.strip()]
        self.message = lines[-1] if lines else ""  # "RuntimeError: stack(): ..."
        self.frames: list[SourceLine] = [
            (m["file"], int(m["line"]), m["function"]) for m in _FRAME.finditer(text)
        ]

    @property
    def inner_text(self) -> str:
        """The worker's own message, its exception type left out."""
        kind, _, said = self.message.partition(": ")
        return said if said else kind

    def user_line(self) -> SourceLine | None:
        """The innermost frame of the user's code in the worker's traceback."""
        for frame in reversed(self.frames):
            if is_user_file(frame[0]):
                return frame
        return None


def worker_error(text: str) -> WorkerError | None:
    """The worker error ``text`` reports, or None when it is not one."""
    return WorkerError(text) if _CAUGHT.search(text) else None


def dataset_return(frame: FrameType, line: int) -> SourceLine | None:
    """The last ``return`` of ``__getitem__`` of the dataset of a DataLoader named on ``line``
    of ``frame`` (the loop ``for batch in loader``)."""
    from torch.utils.data import DataLoader  # a worker error means torch.utils.data is loaded

    for value in named_values(frame, line):
        if not isinstance(value, DataLoader):
            continue
        returned = return_of(getattr(type(value.dataset), "__getitem__", None))
        if returned is not None:
            return returned
    return None
