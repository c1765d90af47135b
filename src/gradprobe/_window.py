"""Bounded memory for long recordings: what a recording keeps of old training steps.

A ``record()`` block around a whole training run sees the same few thousand nodes, writes
and backward calls every step. The analyses need the graphs still alive (a backward that
fails, a tensor carried into the next step), the first steps (a script is short, and what
a loop builds before its first backward lives long) and a summary of the rest; they do not
need the node records of step 1,000 of 3,000 once its graph has been backpropagated and
freed. So after every plain ``backward()`` (one that ends its graph's use), the records made
between the first ``PROTECTED`` backward passes and the latest ``WINDOW`` ones are dropped,
``EVERY`` backward passes at a time, with what only points at them:

- node records (``events.nodes``), except those an analysis looks up later by key (a
  ``.grad`` read on a non-leaf, the first node a leaf fed, the node that made a NaN, a
  custom Function whose backward ignores its gradient) and outputs that nothing consumed,
  detached nor backpropagated (``outputs.append(model(x))``: a script may hold their graphs
  to its end, GP112), up to ``_MAX_HELD`` a line;
- in-place writes, except the first write to each memory from each line, so that "the first
  write after a node saved this memory" and the lines that wrote it stay what they were for
  the nodes kept;
- backward calls, except the first that succeeded and the first that retained its graph,
  counted in ``dropped_backwards``;
- the cut inputs and custom-Function ctx watches of the dropped nodes, and the first use of
  leaves that no longer exist.

A script with fewer than ``PROTECTED + EVERY`` backward passes loses nothing.
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gradprobe._recorder import Backward, Events, NodeKey, NodeRecord, SourceLine, Write

__all__ = ["EVERY", "PROTECTED", "WINDOW", "Window", "step_done"]

PROTECTED = 8  # the first backward passes: everything recorded before the 8th is kept
WINDOW = 4  # the latest backward passes whose records are kept
EVERY = 16  # drop old records every this many backward passes (amortises the walk)
_MAX_FIRST_WRITES = 10_000  # (memory, line) pairs whose first write is kept
_MAX_HELD = 1_000  # outputs nothing consumed kept per line


@dataclass(slots=True)
class Window:
    """Where a recording stands in dropping old steps (kept on its ``Events``)."""

    passes: int = 0  # plain backward passes completed
    # orders of the latest backward passes, newest last
    latest: deque[int] = field(default_factory=lambda: deque(maxlen=WINDOW))
    protected: int = -1  # records made before this order are kept (-1: not yet known)
    settled_nodes: int = 0  # leading records of events.nodes already kept for good
    settled_writes: int = 0  # and of events.writes
    first_writes: set[tuple[int, SourceLine | None]] = field(default_factory=set)
    settled_backwards: int = 0  # and of events.backwards
    dropped_backwards: int = 0  # backward calls no longer in events.backwards
    kept_first: bool = False  # the first backward that succeeded is kept
    kept_retained: bool = False  # and the first that retained its graph
    held: dict[SourceLine | None, int] = field(default_factory=dict)  # see _held


def step_done(mode: Any) -> None:
    """A plain backward pass completed (``events.last_backward`` is its order): drop what
    the analyses no longer need of older steps, every ``EVERY`` passes."""
    events: Events = mode.events
    window = events.window
    window.passes += 1
    window.latest.append(events.last_backward)
    if window.passes == PROTECTED:
        window.protected = events.last_backward
    if window.passes < PROTECTED + WINDOW or (window.passes - PROTECTED) % EVERY:
        return
    cutoff = window.latest[0]  # records made before the WINDOW-th latest pass go
    dropped = _drop_nodes(events, window, cutoff)
    for key in dropped:
        events.cut_inputs.pop(key, None)
        mode.ctx_watched.discard(key)
    _drop_writes(events, window, cutoff)
    _drop_backwards(events, window, cutoff)
    live = mode.leaves.entries
    for ident in [ident for ident in events.first_use if ident not in live]:
        del events.first_use[ident]


def _pinned(events: Events) -> set[NodeKey]:
    """Records that analyses at the end of the recording look up by key. (Outputs nothing
    consumed nor backpropagated are kept by ``_drop_nodes``: a script may hold them, with
    their graphs, to its end.)"""
    pinned: set[NodeKey] = set(events.first_use.values())
    pinned.update(read.node for read in events.grad_reads if read.node is not None)
    pinned.update(blind.node for blind in events.blind_backwards)
    if events.nan_node is not None:
        pinned.add(events.nan_node)
    return pinned


def _drop_nodes(events: Events, window: Window, cutoff: int) -> list[NodeKey]:
    nodes = events.nodes
    start = min(window.settled_nodes, len(nodes))
    pinned = _pinned(events)
    roots = {root for backward in events.backwards for root in backward.roots if root}
    dropped: list[NodeKey] = []
    kept = 0
    for key, record in itertools.islice(nodes.items(), start, None):
        if record.order >= cutoff:
            break
        if record.order < window.protected or key in pinned:
            kept += 1
        elif key not in roots and key not in events.cut_inputs and _held(window, record):
            kept += 1  # an output nothing used, detached nor backpropagated: see _pinned
        else:
            dropped.append(key)
    for key in dropped:
        del nodes[key]
    window.settled_nodes = start + kept
    return dropped


def _held(window: Window, record: NodeRecord) -> bool:
    """Whether to keep ``record`` as an output a script may hold: nothing consumed it, and
    fewer than ``_MAX_HELD`` such records from its line are kept already (a value computed
    each step, never used, is dropped past that; GP112 then counts that many)."""
    if record.consumers:
        return False
    where = record.outer_line or record.line
    count = window.held.get(where, 0)
    if count >= _MAX_HELD:
        return False
    window.held[where] = count + 1
    return True


def _drop_writes(events: Events, window: Window, cutoff: int) -> None:
    writes = events.writes
    start = min(window.settled_writes, len(writes))
    firsts = window.first_writes
    kept: list[Write] = []
    later: list[Write] = []
    for write in itertools.islice(writes, start, None):
        if write.order >= cutoff:
            later.append(write)
            continue
        pair = (write.storage, write.line)
        if write.order < window.protected:
            kept.append(write)
        elif pair not in firsts and len(firsts) < _MAX_FIRST_WRITES:
            firsts.add(pair)
            kept.append(write)
    for _ in range(len(writes) - start):
        writes.pop()
    writes.extend(kept)
    window.settled_writes = start + len(kept)
    writes.extend(later)


def _drop_backwards(events: Events, window: Window, cutoff: int) -> None:
    backwards = events.backwards
    start = min(window.settled_backwards, len(backwards))
    kept: list[Backward] = []
    rest: list[Backward] = []
    for backward in backwards[start:]:
        if backward.order >= cutoff:
            rest.append(backward)
            continue
        keep = backward.order < window.protected
        if backward.error is None and not window.kept_first:
            window.kept_first = keep = True
        if backward.error is None and backward.retain_graph and not window.kept_retained:
            window.kept_retained = keep = True
        if keep:
            kept.append(backward)
        else:
            window.dropped_backwards += 1
    backwards[start:] = [*kept, *rest]
    window.settled_backwards = start + len(kept)
