"""The recordings active in the calling thread: ``record()`` enters itself here, and what
behaves differently inside a recording (``check()`` adding source lines, the testing
helpers) asks here, without importing the recorder (NOTE [threads] in
:mod:`gradprobe._threads`)."""

from __future__ import annotations

from typing import Any

from gradprobe._threads import ThreadBound

__all__ = ["RECORDINGS", "current"]

RECORDINGS: ThreadBound[Any] = ThreadBound()
"""Each thread's active recordings, outermost first."""


def current() -> Any | None:
    """The innermost recording the calling thread entered, or None."""
    own = RECORDINGS.own()
    return own[-1] if own else None
