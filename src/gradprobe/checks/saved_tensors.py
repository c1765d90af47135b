"""Saved tensors: what backward would read was overwritten after it was saved.

GP101/GP109/GP112 name the write that moved a saved tensor's version counter (before
``backward()`` raises, and again when it has raised); GP108 names a write through ``.data``
or numpy, which moves no version counter, so backward silently uses the new values.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import torch

from gradprobe._recorder import (
    Backward,
    Events,
    NodeRecord,
    SourceLine,
    Write,
    _grad_fn,
)
from gradprobe._trace import name_table, trace
from gradprobe.checks._api import BackwardCall, Check, register
from gradprobe.checks._common import _locations, _where
from gradprobe.checks._versions import graph_findings, parse_version_error
from gradprobe.findings import Finding, make_finding
from gradprobe.graph import Graph

__all__ = ["OverwrittenSaves"]


@register
class OverwrittenSaves(Check):
    """Saved tensors overwritten between forward and backward."""

    name = "gradprobe.saved_tensors"
    codes = ("GP101", "GP103", "GP108", "GP109", "GP112")

    def on_backward(self, call: BackwardCall) -> Iterable[Finding]:
        # cheap unless a recorded write touched memory some node saved
        return before_backward(call.run.events, call.roots)

    def on_backward_error(self, call: BackwardCall) -> Iterable[Finding]:
        if call.error is None or parse_version_error(str(call.error)) is None:
            return ()
        return stale_findings(call.run.events, call.roots)


# -- analyses ---------------------------------------------------------------------------


def stale_findings(events: Events, roots: Sequence[torch.Tensor]) -> list[Finding]:
    """GP101/GP109 for saved tensors overwritten since they were saved, with the writing
    line as the cause (from :func:`gradprobe.check`, joined with the recorded writes)."""
    wanted = [root for root in roots if _grad_fn(root) is not None]
    if not wanted:
        return []
    graph = trace(*wanted)
    found = graph_findings(graph, wanted, name_table(None, None))
    return [f for f in join_lines(events, found, graph) if f.code != "GP103"]


def join_lines(events: Events, given: Sequence[Finding], graph: Graph) -> list[Finding]:
    """``check()``'s findings with the recorded lines added: for a stale saved tensor, the
    line that wrote over it (``cause``) and the line that saved it; others unchanged."""
    findings: list[Finding] = []
    merged: dict[tuple[str, SourceLine | None], int] = {}
    for finding in given:
        if finding.code not in ("GP101", "GP109"):
            findings.append(finding)
            continue
        node = graph.nodes[finding.details["node_id"]]
        record = events.nodes.get((node.name, node.sequence_nr or -1))
        saved = record.saves.get(finding.details["slot"]) if record is not None else None
        writes = _writes_after(events, record, saved[1]) if record is not None and saved else []
        if not writes:
            findings.append(finding)
            continue
        first = writes[0]
        assert record is not None
        carried = _carried_graph(events, record, first)
        if carried is not None:
            if ("GP112", carried.location) not in merged:
                merged[("GP112", carried.location)] = len(findings)
                findings.append(carried.finding(node.name, record, first, finding))
            continue
        code = "GP109" if first.in_optimizer or finding.code == "GP109" else "GP101"
        key = (code, first.line)
        extra = (
            f" It was overwritten at {_where(first.line)} by {first.op}"
            + (" inside optimizer.step()" if first.in_optimizer else "")
            + (
                f" (a module built with inplace=True at {_where(first.module_line)})"
                if first.module_line is not None
                else ""
            )
            + f", after {node.name} saved it at {_where(record.line)}."
        )
        if key in merged:  # the same write broke several saved tensors: say it once
            index = merged[key]
            old = findings[index]
            names = [*old.details.get("nodes", [old.node]), node.name]
            findings[index] = replace(old, details={**dict(old.details), "nodes": names})
            continue
        merged[key] = len(findings)
        base = make_finding(code) if code != finding.code else finding
        reuse = _stale_consumer(events, graph, first) if first.in_optimizer else None
        if reuse is not None:
            extra += (
                f" The loss was built after that step, at {_where(reuse.line)}, from outputs"
                " of the forward pass before it: compute them again after the step, or"
                " .detach() them if this loss should not train what made them (an"
                " actor-critic advantage)."
            )
        findings.append(
            replace(
                finding,
                code=base.code,
                kind=base.kind,
                title=base.title,
                hint=base.hint,
                message=finding.message + extra,
                locations=(
                    *_locations(
                        (reuse.line if reuse is not None else None, "cause"),
                        (first.line, "cause"),
                        (first.module_line, "cause"),
                        (record.line, "saved"),
                    ),
                    *finding.locations,
                ),
                details={
                    **dict(finding.details),
                    "write_op": first.op,
                    "nodes": [node.name],
                },
            )
        )
    return findings


def _writes_after(events: Events, record: NodeRecord, storage: int) -> list[Write]:
    return [w for w in events.writes if w.storage == storage and w.order > record.order]


def _stale_consumer(events: Events, graph: Graph, write: Write) -> NodeRecord | None:
    """The first node of ``graph`` made after ``write`` from a value made before it: a loss
    built after ``optimizer.step()`` from an output of the forward pass before the step."""
    records = [events.nodes.get((node.name, node.sequence_nr or -1)) for node in graph.nodes]
    found: NodeRecord | None = None
    for edge in graph.edges:
        parent, child = records[edge.src], records[edge.dst]
        if (
            parent is not None
            and child is not None
            and parent.order > write.order > child.order
            and (found is None or parent.order < found.order)
        ):
            found = parent
    return found


@dataclass(frozen=True, slots=True)
class _Carried:
    """A graph from an earlier iteration, kept by ``retain_graph=True``, that this
    iteration's graph was built on."""

    retained: Backward  # the earlier backward that kept it
    old: NodeRecord  # the last node of the old graph that the new one uses
    new: NodeRecord  # the first node of the new graph built on it

    @property
    def location(self) -> SourceLine | None:
        return self.old.line

    def finding(self, name: str, record: NodeRecord, write: Write, base: Finding) -> Finding:
        by = f"{write.op}" + (" inside optimizer.step()" if write.in_optimizer else "")
        reused = (
            f"line {self.new.line[1]} builds this iteration's graph on it"
            if self.new.line is not None and self.new.line != self.old.line
            else "this iteration's graph is built on it there"
        )
        message = (
            f"This backward reached into the graph of an earlier iteration: the tensor "
            f"made at {_where(self.old.line)} still carries that graph, and {reused}. "
            f"backward(retain_graph=True) at {_where(self.retained.line)} kept the old graph "
            f"alive instead of freeing it, so every backward runs through all earlier "
            f"iterations again. Since then {by} at {_where(write.line)} overwrote a tensor "
            f"that {name} saved at {_where(record.line)}, which is why backward fails. "
            "Detach what you carry across iterations (h = h.detach()) and drop "
            "retain_graph=True."
        )
        # The carried tensor and the retain_graph=True; the join line only if they coincide.
        causes = [self.old.line, self.retained.line, self.new.line]
        unique = list(dict.fromkeys(line for line in causes if line is not None))[:2]
        return make_finding(
            "GP112",
            message=message,
            tensor=base.tensor,
            node=name,
            locations=_locations(
                *((line, "cause") for line in unique),
                (record.line, "saved"),
            )
            + [loc for loc in base.locations if loc.role == "error"],
            details={**dict(base.details), "write_op": write.op, "retained_by": "backward"},
        )


def _carried_graph(events: Events, record: NodeRecord, write: Write) -> _Carried | None:
    """Was ``record`` part of a graph an earlier ``backward(retain_graph=True)`` kept, that
    a later forward pass extended? Walks up the recorded consumers to the join."""
    retained = next(
        (
            b
            for b in events.backwards
            if b.error is None and b.retain_graph and record.order < b.order < write.order
        ),
        None,
    )
    if retained is None:
        return None
    nodes = events.nodes
    seen = {id(record)}
    frontier = [record]
    while frontier and len(seen) < 200_000:
        step: list[NodeRecord] = []
        for old in frontier:
            for key in old.consumers:
                new = nodes.get(key)
                if new is None or id(new) in seen:
                    continue
                if new.order > retained.order:
                    if not _ran_before(events, new.line, retained.order):
                        return None  # a second backward in straight-line code, no loop
                    return _Carried(retained, old, new)
                seen.add(id(new))
                step.append(new)
        frontier = step
    return None


def _ran_before(events: Events, line: SourceLine | None, order: int) -> bool:
    """Did ``line`` make a node before ``order``: is it in a loop body that ran again?"""
    return line is not None and any(
        record.line == line for record in events.nodes.values() if record.order < order
    )


def silent_findings(events: Events, roots: Sequence[torch.Tensor]) -> list[Finding]:
    """GP108: saved memory overwritten through an alias that does not share the version
    counter (``.data``, numpy), so backward will not notice and uses the new values."""
    wanted = [root for root in roots if _grad_fn(root) is not None]
    if not wanted:
        return []
    graph = trace(*wanted)
    findings: list[Finding] = []
    seen: set[SourceLine | None] = set()
    for node in graph.nodes:
        record = events.nodes.get((node.name, node.sequence_nr or -1))
        if record is None or not node.saved:
            continue
        for saved in node.saved:
            before = record.saves.get(saved.slot)
            if before is None or saved.version_now != before[0] or not before[1]:
                continue
            for write in _writes_after(events, record, before[1]):
                if write.line in seen:
                    break
                seen.add(write.line)
                findings.append(
                    make_finding(
                        "GP108",
                        message=(
                            f"{node.name} saved a tensor of shape {saved.shape} "
                            f"(slot {saved.slot!r}) at {_where(record.line)}; its memory was "
                            f"then overwritten at {_where(write.line)} by {write.op}"
                            + _how_silent(write.op)
                            + ", so backward() will not raise and will compute the "
                            "gradient from the overwritten values."
                        ),
                        node=node.name,
                        locations=_locations((write.line, "cause"), (record.line, "saved")),
                        details={"slot": saved.slot, "shape": list(saved.shape)},
                    )
                )
                break
    return findings


def _how_silent(op: str) -> str:
    if "batch_norm" in op:
        return (
            " in training mode, which updates the running statistics in place without "
            "moving their version counter (the module was in eval mode when it saved them; "
            "backpropagate that output before the next training-mode call, or call the "
            "module in eval mode again)"
        )
    return " through an alias that does not share its version counter (.data, .numpy())"


def before_backward(events: Events, roots: Sequence[torch.Tensor]) -> list[Finding]:
    """What backward() is about to trip over (or silently get wrong); cheap unless a
    recorded write touched memory that some node saved."""
    if not events.suspicious:
        return []
    events.suspicious = False
    return [*silent_findings(events, roots), *stale_findings(events, roots)]
