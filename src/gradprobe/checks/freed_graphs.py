"""Freed graphs: a second backward through a graph whose saved tensors were released, and
graphs kept alive across iterations (a running total of losses, carried state)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import torch

from gradprobe._compat import FREED_ERROR
from gradprobe._recorder import (
    Backward,
    Events,
    NodeKey,
    NodeRecord,
    SourceLine,
    _grad_fn,
)
from gradprobe._trace import trace
from gradprobe.checks._api import BackwardCall, Check, Run, register
from gradprobe.checks._carry import cached_at, carrier
from gradprobe.checks._common import _locations, _where
from gradprobe.findings import Finding, make_finding
from gradprobe.graph import Graph

__all__ = ["BackwardTwice", "KeptAlive"]


@register
class BackwardTwice(Check):
    """``backward()`` through a graph an earlier backward already freed (GP103)."""

    name = "gradprobe.freed_graphs.backward_twice"
    codes = ("GP103",)

    def on_backward_error(self, call: BackwardCall) -> Iterable[Finding]:
        if call.error is None or FREED_ERROR not in str(call.error):
            return ()
        return _freed(call.run.events, call.event, call.roots)


@register
class KeptAlive(Check):
    """Graphs that grow across iterations or stay referenced after the run (GP112)."""

    name = "gradprobe.freed_graphs.kept_alive"
    codes = ("GP112",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _kept_alive(run.events)

    def on_namespace(self, run: Run, namespace: Mapping[str, Any]) -> Iterable[Finding]:
        return live_graphs(run.events, namespace)


# -- analyses ---------------------------------------------------------------------------


def _freed(events: Events, event: Backward, roots: Sequence[torch.Tensor]) -> list[Finding]:
    wanted = [root for root in roots if _grad_fn(root) is not None]
    if not wanted:
        return []
    graph = trace(*wanted)
    keys: list[NodeKey] = [(node.name, node.sequence_nr or -1) for node in graph.nodes]
    inside = set(keys)
    below_freed = _reaches_freed(graph)
    boundary: NodeKey | None = None
    outside: list[NodeRecord] = []
    for index, key in enumerate(keys):
        record = events.nodes.get(key)
        if record is None or not below_freed[index]:
            continue
        others = [
            events.nodes[c] for c in record.consumers if c not in inside and c in events.nodes
        ]
        if others:
            boundary = key
            outside = sorted(others, key=lambda r: r.order)
            break
    earlier = _earlier_backward(events, event)
    if boundary is not None:
        shared = events.nodes[boundary]
        first = outside[0]
        users = [events.nodes[c] for c in shared.consumers if c in inside and c in events.nodes]
        root_records = [events.nodes.get(key) for key in event.roots if key is not None]
        message = (
            f"This backward reached {boundary[0]} (made at {_where(shared.line)}), which an "
            f"earlier backward already ran through and freed: it was also used at "
            f"{_where(first.line)} in a graph that was backpropagated"
            + (f" at {_where(earlier.line)}" if earlier is not None else "")
            + "."
        )
        cause = first.line
        read_at: SourceLine | None = None
        if earlier is not None and any(
            root is not None and root.order < earlier.order for root in root_records
        ):
            # Two losses built from one forward, then backpropagated one after the other:
            # the first backward is the one that must keep the graph.
            cause = earlier.line
            message += (
                " This loss was built before that backward ran, from the same forward pass:"
                " pass retain_graph=True to the first backward(), or add the losses and call"
                " backward() once."
            )
        elif (
            earlier is not None
            and shared.line is not None
            and users
            and any(
                record.line == shared.line and record.order > earlier.order
                for record in reversed(events.nodes.values())
            )
        ):
            # The line that made it ran again after that backward: it is state from the
            # previous iteration (an RNN's hidden state), carried into this one. The line
            # that carries it is the one to change.
            user = min(users, key=lambda r: r.order)
            cause = user.outer_line or user.line
            # The carried name is read where this iteration used the old value, or where
            # the line that made it ran again (rnn(x, state)).
            for use in (cause, shared.outer_line, shared.line):
                stored = carrier(use)
                if stored is not None:
                    break
            if stored is not None:
                read_at, cause = stored.use, stored.line
                message += (
                    f" It is state from the previous iteration (line {shared.line[1]} has run"
                    f" again since), carried into this one at {_where(read_at)} through "
                    f"{stored.name!r}, which {_where(cause)} stores for the next iteration: "
                    f"store a detached value there ({stored.fix}) so each iteration "
                    "backpropagates through its own graph."
                )
            else:
                message += (
                    f" It is state from the previous iteration (line {shared.line[1]} has run"
                    f" again since), carried into this one at {_where(cause)}: detach it there"
                    " (h = h.detach()) so each iteration backpropagates through its own graph."
                )
        elif first.line is not None and any(user.line == first.line for user in users):
            # The same line used it in both graphs: a value computed once, before a loop,
            # and reused on every iteration. Where it is computed is what must change,
            # unless the function that made it keeps it on an object (a cache).
            kept = cached_at(shared.line)
            cause = kept or shared.line
            if kept is not None:
                message += (
                    f" The same line uses it on every iteration: {_where(kept)} keeps it on "
                    "an object (a cache) that later calls return, with the graph it was made "
                    "with. Cache a detached value there (or build it under torch.no_grad()), "
                    "or do not cache what requires grad."
                )
            else:
                message += (
                    " The same line uses it on every iteration: it was computed once, outside"
                    " the loop. Compute it inside the loop, or detach it where it is made if"
                    " what made it should not be trained."
                )
        elif (kept := cached_at(shared.line)) is not None:
            # Used again through an object the function that made it keeps it on (a
            # cache read back on later calls, sliced or not): the cache is the line to change.
            cause = kept
            message += (
                f" It was kept at {_where(kept)} on an object (a cache) that later calls read "
                "back, with the graph it was made with. Cache a detached value there (or "
                "build it under torch.no_grad()), or do not cache what requires grad."
            )
        else:
            message += (
                " Detach it where it is reused (.detach()), or recompute it for each backward."
            )
        return [
            make_finding(
                "GP103",
                message=message,
                node=boundary[0],
                locations=_locations(
                    (cause, "cause"),
                    (shared.line, "created"),
                    (read_at, "read"),
                    (earlier.line if earlier else None, "read"),
                ),
                details={"freed_by_line": earlier.line[1] if earlier and earlier.line else None},
            )
        ]
    if earlier is not None:
        return [
            make_finding(
                "GP103",
                message=(
                    f"backward() already ran through this graph at {_where(earlier.line)} "
                    "and freed it. Pass retain_graph=True there if you really need a second "
                    "backward, or recompute the forward pass."
                ),
                locations=_locations((earlier.line, "cause")),
            )
        ]
    return []


def _reaches_freed(graph: Graph) -> list[bool]:
    """Per node: is it, or anything below it, freed?"""
    count = len(graph.nodes)
    children: list[list[int]] = [[] for _ in range(count)]
    for edge in graph.edges:
        children[edge.src].append(edge.dst)
    result = [node.freed for node in graph.nodes]
    # BFS order puts parents before children mostly; iterate to a fixed point.
    changed = True
    while changed:
        changed = False
        for index in range(count - 1, -1, -1):
            if not result[index] and any(result[c] for c in children[index]):
                result[index] = True
                changed = True
    return result


def _earlier_backward(events: Events, event: Backward) -> Backward | None:
    for previous in reversed(events.backwards):
        if previous is event or previous.order >= event.order:
            continue
        if previous.error is None:
            return previous
    return None


def _kept_alive(events: Events) -> list[Finding]:
    found: list[Finding] = []
    for line, backwards in events.kept_alive.items():
        count = len(backwards)
        if count < 2:
            continue
        found.append(
            make_finding(
                "GP112",
                message=(
                    f"At {_where(line)} each iteration builds on a tensor from an earlier "
                    f"iteration whose graph was already backpropagated ({count + 1} "
                    "iterations chained so far): every old graph, with the activations it "
                    "saved, stays in memory and the chain grows each step. Accumulate "
                    "loss.item() (or t.detach()) there instead."
                ),
                locations=_locations((line, "cause")),
                details={"iterations_chained": count + 1},
            )
        )
    return found


def live_graphs(events: Events, namespace: Mapping[str, Any]) -> list[Finding]:
    """GP112 for tensors a script still holds at its end, several from one line, each with
    an unfreed graph (``outputs.append(model(x))`` in an evaluation loop without
    ``torch.no_grad()``): every iteration's activations stay in memory."""
    if events.leaf_backwards and all(
        all(key is None for key in event.roots) for event in events.backwards
    ):
        return []  # every backward() ran on a rebuilt leaf: those graphs were the loss (GP115)
    held: dict[tuple[str, SourceLine], list[torch.Tensor]] = {}
    for name, value in namespace.items():
        if name.startswith("__"):
            continue
        for tensor in _held_tensors(value):
            fn = _grad_fn(tensor)
            record = events.nodes.get((fn.name(), fn._sequence_nr())) if fn is not None else None
            line = (record.outer_line or record.line) if record is not None else None
            if line is not None:
                held.setdefault((name, line), []).append(tensor)
    found: list[Finding] = []
    for (name, line), tensors in held.items():
        if len(tensors) < _HELD_MIN:
            continue
        graph = trace(tensors[-1], max_nodes=10_000)
        saved = sum(len(node.saved) for node in graph.nodes if not node.freed)
        if not saved:
            continue  # backpropagated: only the small nodes stay, not the activations
        found.append(
            make_finding(
                "GP112",
                message=(
                    f"At the end of the script `{name}` still holds {len(tensors)} tensors "
                    f"made at {_where(line)}, each with the graph of its own forward pass "
                    f"(the latest keeps {saved} saved tensors), which no backward() freed: "
                    "every iteration's activations stay in memory. Compute them under "
                    "torch.no_grad() if they are for evaluation, or keep .detach() (or "
                    ".item()) of them."
                ),
                tensor=name,
                locations=_locations((line, "cause")),
                details={"variable": name, "tensors": len(tensors), "saved_tensors": saved},
            )
        )
    return found


_HELD_MIN = 3  # fewer is a last batch kept for printing, not a pile-up


def _held_tensors(value: Any, depth: int = 3) -> Iterator[torch.Tensor]:
    """Tensors that require grad inside ``value`` (lists, tuples and dicts, a few levels)."""
    if isinstance(value, torch.Tensor):
        if value.requires_grad:
            yield value
    elif depth and isinstance(value, (list, tuple, dict)):
        items = value.values() if isinstance(value, dict) else value
        for count, item in enumerate(items):
            if count >= 100_000:
                break
            yield from _held_tensors(item, depth - 1)
