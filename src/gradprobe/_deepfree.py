"""Keep deep autograd graphs safe to free after gradprobe has touched every node.

NOTE [deep free]
On torch 2.13/2.14 an autograd node that never had a Python wrapper is destroyed by an
iterative loop (``deleteNode``), however long the chain below it. Once Python has seen a
node (through ``grad_fn``, ``next_functions``, a node-creation hook, ...), the node owns its
wrapper, and destroying it goes ``~Node -> decref(wrapper) -> wrapper dealloc -> ~Node of
the next node -> ...``: one C stack frame group per node. A chain of ~40k touched nodes
overflows the default 8 MiB stack and segfaults when it is freed
(``shared/research/deep_free_segfault.py``). A graph walk cannot avoid touching every node,
and the wrappers cannot be dropped while the graph is alive.

What holds: while Python holds a reference to a node's wrapper, the cascade stops there
(the C++ side only decrements the wrapper's refcount). So during a walk we split the
nodes into bands of ``BAND`` consecutive sequence numbers (within one thread, every edge
goes to a node with a lower sequence number) and hold every node entered from another
band. A run of un-held nodes then stays within one band, plus at most one childless node
(an AccumulateGrad) below it: any free cascade, in the user's thread or ours, is at most
``BAND + 1`` nodes deep (~200 KB of stack). When some edge breaks the ordering (nodes
made in several threads), :func:`hold_points` computes the same bands from exact
longest-path depths instead.

A held node is released once nothing but gradprobe owns it: its wrapper's refcount is then
exactly ours (the C++ side holds one reference while anything in C++ still points at the
node). Releasing it frees the band below it, down to the next held nodes, which become
free in turn; :func:`release_free` sweeps root-first until nothing moves. A daemon thread
sweeps when a traced root tensor dies and every ``POLL_SECONDS`` while anything is held, so
memory is returned shortly after the user drops the graph. At interpreter exit whatever is
still owned elsewhere is deliberately leaked: module teardown frees objects in arbitrary
order, and a leak at exit is harmless where a segfault is not.

Graphs whose longest path is under ``BAND`` are never held, so ordinary models pay nothing.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import queue
import sys
import threading
import weakref
from collections.abc import Iterable, Sequence
from typing import Any

BAND = 1000
"""Longest run of Python-touched nodes a free cascade may walk (~200 bytes of C stack each)."""

POLL_SECONDS = 0.2
_WORKER_STACK = 64 * 1024 * 1024

_lock = threading.RLock()
_held: dict[int, Any] = {}  # id(wrapper) -> wrapper, in hold order (roots first)
_wakeups: queue.SimpleQueue[None] = queue.SimpleQueue()
_worker: threading.Thread | None = None
_exiting = threading.Event()


def _calibrate() -> int:
    """Refcount of an object referenced only by ``_held`` when read as in release_free."""
    probe = object()
    table = {0: probe}
    del probe
    return sys.getrefcount(table[0])


_ONLY_OURS = _calibrate()


def hold_points(children: Sequence[Sequence[int]]) -> list[int]:
    """The nodes to hold so that no run of un-held nodes is longer than ``BAND``.

    ``children[i]`` lists the ids node ``i`` has edges to (its next functions). Depth is
    the longest path from a root (Kahn's topological order); a node with children is held
    when an edge enters it from another band of ``BAND`` depths. Returned shallowest first,
    the order in which they can be released.
    """
    count = len(children)
    indegree = [0] * count
    for kids in children:
        for child in kids:
            indegree[child] += 1
    depth = [0] * count
    order = [node for node in range(count) if not indegree[node]]
    for node in order:  # grows while we iterate: Kahn's queue
        below = depth[node] + 1
        for child in children[node]:
            if depth[child] < below:
                depth[child] = below
            indegree[child] -= 1
            if not indegree[child]:
                order.append(child)
    if max(depth, default=0) < BAND:
        return []
    hold = {
        child
        for node, kids in enumerate(children)
        for child in kids
        if children[child] and depth[child] // BAND != depth[node] // BAND
    }
    return sorted(hold, key=depth.__getitem__)


def hold_points_by_sequence(sequence: Sequence[int], crossings: Sequence[int]) -> list[int]:
    """The nodes to hold, from sequence numbers: a cheaper stand-in for :func:`hold_points`.

    Valid only when every edge goes from a higher to a lower ``sequence_nr`` (true for a
    graph built in one thread; the caller checks each edge while walking). Along a path
    sequence numbers then strictly decrease, so a run of nodes whose edges stay within one
    band of ``BAND`` sequence numbers has at most ``BAND`` nodes; ``crossings`` are the
    nodes an edge enters from another band. ``sequence[i]`` is -1 for AccumulateGrad.
    Returned highest sequence number (closest to the roots) first.
    """
    numbers = [number for number in sequence if number >= 0]
    if not numbers or max(numbers) - min(numbers) < BAND:
        return []  # the longest path is shorter than one band
    return sorted(set(crossings), key=sequence.__getitem__, reverse=True)


def protect(wrappers: Iterable[Any], roots: Iterable[Any] = ()) -> int:
    """Hold ``wrappers`` (autograd nodes) until nothing else owns them; returns how many.

    ``roots`` are the traced tensors: when one dies, the worker sweeps at once.
    """
    added = 0
    with _lock:
        for wrapper in wrappers:
            key = id(wrapper)
            if key not in _held:
                _held[key] = wrapper
                added += 1
        if not added:
            return 0
        for tensor in roots:
            try:
                weakref.finalize(tensor, _wakeups.put, None)
            except TypeError:
                continue
        _ensure_worker()
    _wakeups.put(None)
    return added


def held_count() -> int:
    """How many nodes gradprobe holds right now to keep deep graphs safe to free."""
    return len(_held)


def release_free(*, interruptible: bool = False) -> int:
    """Release every held node nothing else owns, root-first; returns how many were released.

    Each release frees at most one band of nodes below it (bounded stack), which can leave
    further held nodes free: the sweep repeats until a pass releases nothing. The worker
    sweeps ``interruptible``: it stops between releases once the interpreter is exiting, so
    finalization never kills it inside a C++ destructor.
    """
    released = 0
    with _lock:
        while True:
            progress = 0
            for key in list(_held):
                if interruptible and _exiting.is_set():
                    return released + progress
                if key in _held and sys.getrefcount(_held[key]) <= _ONLY_OURS:
                    del _held[key]
                    progress += 1
            released += progress
            if not progress:
                return released


def drain(timeout: float = 10.0) -> bool:
    """Sweep until nothing is held or ``timeout`` seconds pass; True if nothing is held.

    For tests and for programs that want memory back at a known point.
    """
    import time

    deadline = time.monotonic() + timeout
    while True:
        release_free()
        if not _held:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)


def _run_worker() -> None:
    while not _exiting.is_set():
        with contextlib.suppress(queue.Empty):
            _wakeups.get(timeout=POLL_SECONDS if _held else None)
        if _exiting.is_set():
            return
        if _held:
            release_free(interruptible=True)


def _ensure_worker() -> None:
    global _worker
    if _worker is not None and _worker.is_alive():
        return
    previous: int | None = threading.stack_size()
    try:
        threading.stack_size(_WORKER_STACK)
    except (ValueError, RuntimeError):  # platforms that cannot set thread stack sizes
        previous = None
    try:
        _worker = threading.Thread(target=_run_worker, name="gradprobe-deepfree", daemon=True)
        _worker.start()
    finally:
        if previous is not None:
            threading.stack_size(previous)


def _at_exit() -> None:
    _exiting.set()
    _wakeups.put(None)
    worker = _worker
    if worker is not None and worker is not threading.current_thread():
        worker.join(timeout=30)
    if not _held:
        return
    release_free()
    if _held:
        # Still owned by live tensors that module teardown will free in arbitrary order:
        # keep our references forever so every cascade still stops at a held node.
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(_held))


def _after_fork_in_child() -> None:
    global _worker, _lock
    _worker = None
    _lock = threading.RLock()


atexit.register(_at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
