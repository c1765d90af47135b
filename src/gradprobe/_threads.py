"""Which recordings are active in the calling thread.

NOTE [threads]
gradprobe's patches (``Tensor.__setattr__``, ``Module.__init__``, the optimizer step hooks,
the global module hooks, ...) are process-wide: torch offers no per-thread version of
them. They are installed once, by the first recording, and removed by the last one
(:class:`gradprobe._patch.SharedPatches`), and each call looks up, in a thread-local,
the recordings that the *calling* thread entered. A thread with none passes straight
through, so a recording never reads the ``.grad`` of a tensor that another thread's
backward is writing, and its findings are about its own thread only.

The one exception is autograd's own worker threads: on CPU, backward runs in the thread
that called it, but for CUDA tensors the engine runs it on a device thread Python never
started. While exactly one thread with a recording is inside ``backward()`` (the recorder
notes it in :func:`backward_started` / :func:`backward_ended`), hooks firing on such a
foreign thread are attributed to that thread's recordings. With two recording threads in
backward at once they are attributed to neither (the findings miss those calls; nothing
reads another thread's tensors). There is no GPU where this was written: that rule is
untested beyond the CPU path.
"""

from __future__ import annotations

import threading
from typing import Generic, TypeVar

__all__ = ["ThreadBound", "backward_ended", "backward_started"]

_T = TypeVar("_T")

# thread ident -> how many recorded backward() calls it is inside
_IN_BACKWARD: dict[int, int] = {}
_DUMMY = getattr(threading, "_DummyThread", ())  # threads started outside Python


class _Holder(Generic[_T]):
    """One thread's active items; shared by reference so a block ended from another
    thread can still take itself out."""

    __slots__ = ("ident", "items")

    def __init__(self) -> None:
        self.ident = threading.get_ident()
        self.items: tuple[_T, ...] = ()


class _Local(threading.local, Generic[_T]):
    def __init__(self) -> None:  # runs once in every thread that reads it
        self.holder: _Holder[_T] = _Holder()


class ThreadBound(Generic[_T]):
    """Objects active per thread (recorder modes, recordings, hook probes), outermost
    first; see NOTE [threads]."""

    def __init__(self) -> None:
        self._local: _Local[_T] = _Local()
        self._holders: dict[int, _Holder[_T]] = {}  # ident -> holder, for worker threads

    def here(self) -> tuple[_T, ...]:
        """The items of the calling thread (cheap: a thread-local read)."""
        items = self._local.holder.items
        if items or not _IN_BACKWARD:
            return items
        return self._borrowed()

    def own(self) -> tuple[_T, ...]:
        """The items the calling thread itself entered (no worker-thread rule)."""
        return self._local.holder.items

    def _borrowed(self) -> tuple[_T, ...]:
        if len(_IN_BACKWARD) != 1 or not isinstance(threading.current_thread(), _DUMMY):
            return ()
        for ident in list(_IN_BACKWARD):
            holder = self._holders.get(ident)
            if holder is not None:
                return holder.items
        return ()

    def add(self, item: _T) -> _Holder[_T]:
        """Make ``item`` active in the calling thread (innermost); returns the handle
        :meth:`remove` takes."""
        holder = self._local.holder
        holder.items = (*holder.items, item)
        self._holders[holder.ident] = holder
        return holder

    def remove(self, holder: _Holder[_T], item: _T) -> None:
        """Take ``item`` out of the thread it was added in (from any thread)."""
        holder.items = tuple(other for other in holder.items if other is not item)
        if not holder.items and self._holders.get(holder.ident) is holder:
            del self._holders[holder.ident]


def backward_started() -> None:
    """The calling thread's recorded ``backward()`` begins (see NOTE [threads])."""
    ident = threading.get_ident()
    _IN_BACKWARD[ident] = _IN_BACKWARD.get(ident, 0) + 1


def backward_ended() -> None:
    ident = threading.get_ident()
    depth = _IN_BACKWARD.get(ident, 0) - 1
    if depth > 0:
        _IN_BACKWARD[ident] = depth
    else:
        _IN_BACKWARD.pop(ident, None)
