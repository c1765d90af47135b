"""The recordings active in the calling thread: ``record()`` enters itself here, and what
behaves differently inside a recording (``check()`` adding source lines, the testing
helpers) asks here, without importing the recorder."""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["current", "enter", "leave"]

_local = threading.local()


def _stack() -> list[Any]:
    stack: list[Any] | None = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def current() -> Any | None:
    """The innermost recording this thread entered, or None."""
    stack = _stack()
    return stack[-1] if stack else None


def enter(recording: Any) -> None:
    _stack().append(recording)


def leave(recording: Any) -> None:
    stack = _stack()
    if recording in stack:
        stack.remove(recording)
