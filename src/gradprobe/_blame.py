"""Blame: turn what the recorder saw into findings that name the line to change.

The analyses the checks in :mod:`gradprobe.checks` call: before ``backward()`` runs
(:func:`before_backward`: saved tensors overwritten since they were saved), when it raised
(while the graph is still at hand), and at the end of the run (``.grad`` reads on
non-leaves, constant loss terms, NaN/Inf, attribute typos, parameters that got no
gradient). They move into the check modules family by family.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch

from gradprobe._carry import carrier
from gradprobe._compat import HOOK_CHANGED_ERROR, NO_GRAD_FN_TEXT, NONSCALAR_ERROR
from gradprobe._recorder import (
    Backward,
    Events,
    GradRead,
    NodeKey,
    NodeRecord,
    Reparam,
    SourceLine,
    Write,
    _grad_fn,
    _names_at,
    _storage,
)
from gradprobe._source import line_location
from gradprobe.check import check
from gradprobe.findings import Finding, Location, LocationRole, make_finding
from gradprobe.graph import Graph
from gradprobe.trace import trace

__all__ = [
    "before_backward",
    "copy_freezes",
    "empty_loads",
    "live_graphs",
    "location",
    "optimizer_coverage",
]

_NONSCALAR = NONSCALAR_ERROR
_NO_GRAD_FN = NO_GRAD_FN_TEXT


location = line_location  # a Location for a recorded source line


def _locations(*pairs: tuple[SourceLine | None, LocationRole]) -> list[Location]:
    found: list[Location] = []
    seen: set[tuple[str, int, str]] = set()
    for line, role in pairs:
        loc = location(line, role)
        if loc is not None and (loc.file, loc.line, role) not in seen:
            seen.add((loc.file, loc.line, role))
            found.append(loc)
    return found


def _where(line: SourceLine | None) -> str:
    if line is None:
        return "an unknown line"
    return f"line {line[1]}"


# -- stale and silently mutated saved tensors ----------------------------------------------------


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


def stale_findings(events: Events, roots: Sequence[torch.Tensor]) -> list[Finding]:
    """GP101/GP109 for saved tensors overwritten since they were saved, with the writing
    line as the cause (from :func:`gradprobe.check`, joined with the recorded writes)."""
    wanted = [root for root in roots if _grad_fn(root) is not None]
    if not wanted:
        return []
    report = check(*wanted, lines=False)
    return [f for f in join_lines(events, report.findings, report.graph) if f.code != "GP103"]


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
                            f"then overwritten at {_where(write.line)} by {write.op} through "
                            "an alias that does not share its version counter (.data, "
                            ".numpy()), so backward() will not raise and will compute the "
                            "gradient from the overwritten values."
                        ),
                        node=node.name,
                        locations=_locations((write.line, "cause"), (record.line, "saved")),
                        details={"slot": saved.slot, "shape": list(saved.shape)},
                    )
                )
                break
    return findings


def before_backward(events: Events, roots: Sequence[torch.Tensor]) -> list[Finding]:
    """What backward() is about to trip over (or silently get wrong); cheap unless a
    recorded write touched memory that some node saved."""
    if not events.suspicious:
        return []
    events.suspicious = False
    return [*silent_findings(events, roots), *stale_findings(events, roots)]


# -- errors raised by backward ------------------------------------------------------------------


_HOOK_CHANGED = HOOK_CHANGED_ERROR


def _hook_changed(events: Events, name: str, what: str) -> list[Finding]:
    registered, returns = events.tensor_hooks.get(name, (None, None))
    return [
        make_finding(
            "GP307",
            message=(
                f"The tensor hook {name!r}"
                + (f" registered at {_where(registered)}" if registered else "")
                + " returned"
                + (f" (at {_where(returns)})" if returns else "")
                + f" a gradient whose {what} differs from the one it was given, so"
                " backward() stopped. A hook may only replace the gradient with one "
                "like it; keep other results (a pooled map for Grad-CAM) in a variable."
            ),
            locations=_locations((returns, "cause"), (registered, "registered")),
            details={"hook": name, "changed": what},
        )
    ]


def _nonscalar(events: Events, event: Backward, roots: Sequence[torch.Tensor]) -> list[Finding]:
    for root, key in zip(roots, event.roots, strict=False):
        if root.numel() == 1:
            continue
        record = events.nodes.get(key) if key is not None else None
        line = record.line if record is not None else None
        return [
            make_finding(
                "GP105",
                message=(
                    f"backward() was called on a tensor of shape {tuple(root.shape)} "
                    f"({root.numel()} elements) without a gradient; it was made by "
                    f"{key[0] if key else 'an operation'} at {_where(line)}. Reduce it to "
                    "a scalar there (mean/sum over the batch) or pass a gradient."
                ),
                tensor=f"tensor of shape {tuple(root.shape)}",
                node=key[0] if key else None,
                locations=_locations((line, "cause")),
                details={"shape": list(root.shape)},
            )
        ]
    return []


def _no_grad_fn(
    events: Events,
    roots: Sequence[torch.Tensor],
    taint: Callable[[torch.Tensor], frozenset[int]],
) -> list[Finding]:
    findings: list[Finding] = []
    for root in roots:
        if root.requires_grad:
            continue
        cuts = sorted((events.cuts[i] for i in taint(root)), key=lambda cut: cut.order)
        if not cuts and events.exits:
            # Not computed from a cut value, but values left torch after a cut (.numpy(),
            # .tolist(), .item()) and came back as a new tensor: the latest such cut.
            cuts = [max((events.cuts[i] for i in events.exits), key=lambda cut: cut.order)]
        where = ", ".join(f"{cut.op} ({cut.kind}) at {_where(cut.line)}" for cut in cuts)
        findings.append(
            make_finding(
                "GP104",
                message=(
                    f"The tensor passed to backward() (shape {tuple(root.shape)}) does not "
                    "require grad: "
                    + (
                        f"its graph was cut by {where}."
                        if cuts
                        else "nothing that requires grad was used to compute it while "
                        "gradients were enabled."
                    )
                ),
                locations=_locations(*_cut_causes(cuts)),
                details={"cuts": [cut.op for cut in cuts]},
            )
        )
    return findings


def _cut_causes(cuts: Sequence[Any]) -> list[tuple[SourceLine | None, LocationRole]]:
    """The lines to blame for cuts, at most two. A cut under no_grad blames the line that
    turned gradients off; the op that ran there is where the value was ``created``."""
    pairs: list[tuple[SourceLine | None, LocationRole]] = []
    made: list[tuple[SourceLine | None, LocationRole]] = []
    for cut in cuts:
        context = getattr(cut, "context", None)
        line = context if context is not None else cut.line
        if line is not None and (line, "cause") not in pairs and len(pairs) < 2:
            pairs.append((line, "cause"))
            if context is not None and cut.line is not None:
                made.append((cut.line, "created"))
    return pairs + made


def scalar_backward(events: Events, error: BaseException) -> list[Finding]:
    """``loss.item().backward()``: the loss became a Python number at an ``.item()``."""
    if not isinstance(error, AttributeError) or "attribute 'backward'" not in str(error):
        return []
    items = [cut for cut in events.cuts.values() if cut.kind == "item"]
    if not items:
        return []
    last = max(items, key=lambda cut: cut.order)
    return [
        make_finding(
            "GP104",
            message=(
                f"backward() was called on a Python number: {last.op}() at "
                f"{_where(last.line)} turned a tensor that required grad into a plain float, "
                "which has no graph. Keep the tensor for backward and call .item() only "
                "for logging."
            ),
            locations=_locations((last.line, "cause")),
        )
    ]


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
            # and reused on every iteration. Where it is computed is what must change.
            cause = shared.line
            message += (
                " The same line uses it on every iteration: it was computed once, outside"
                " the loop. Compute it inside the loop, or detach it where it is made if"
                " what made it should not be trained."
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


# -- at the end of the recording ---------------------------------------------------------------


def _none_grads(events: Events) -> list[Finding]:
    return [
        make_finding(
            "GP122",
            message=(
                f"{name}.backward returned None for input"
                f"{'s' if len(missing) > 1 else ''} {', '.join(str(i) for i in missing)} of its "
                "forward"
                + (f" (at {_where(line)})" if line else "")
                + ", although "
                + ("they need" if len(missing) > 1 else "it needs")
                + " a gradient: autograd takes None as zero, so whatever is behind "
                + ("them" if len(missing) > 1 else "it")
                + " (a parameter) silently gets no gradient. Return the gradient for every "
                "input with ctx.needs_input_grad[i] True."
            ),
            node=f"{name}Backward",
            locations=_locations((line, "cause")),
            details={"function": name, "inputs": missing},
        )
        for name, missing, line in events.none_grads[:1]
    ]


def _blind_backwards(events: Events) -> list[Finding]:
    found = []
    for name, line, key, ones in events.blind_backwards[:3]:
        record = events.nodes.get(key)
        now = (
            "Here the gradient arriving was all ones, so this run's gradients are right by "
            "luck; weight, average or scale the output (a GradScaler, a loss weight) and "
            "they are wrong."
            if ones
            else "The gradient arriving here was not all ones, so every gradient behind "
            f"{name} is wrong, without an error."
        )
        found.append(
            make_finding(
                "GP128",
                message=(
                    f"{name}.backward never reads the gradient it is given, yet returned "
                    f"gradients (at {_where(line)}): it returns the local derivative of "
                    f"{name}.forward instead of grad_output times it. {now}"
                ),
                node=f"{name}Backward",
                locations=_locations(
                    (line, "cause"), (record.line if record is not None else None, "created")
                ),
                details={"function": name, "arrived_all_ones": ones},
            )
        )
    return found


def _ctx_writes(events: Events) -> list[Finding]:
    found = []
    seen: set[tuple[str, str]] = set()
    for kept in events.ctx_writes:
        name = kept.function
        if (name, kept.slot) in seen:
            continue
        seen.add((name, kept.slot))
        write = next(
            (w for w in events.writes if w.storage == kept.storage and w.order > kept.order),
            None,
        )
        where = f" by {write.op} at {_where(write.line)}" if write is not None else ""
        found.append(
            make_finding(
                "GP129",
                message=(
                    f"ctx.{kept.slot}, kept on the ctx of {name} "
                    + (f"at {_where(kept.stored)} " if kept.stored else "")
                    + f"instead of saved with ctx.save_for_backward, was modified in place"
                    f"{where} after {name}.apply"
                    + (f" at {_where(kept.line)}" if kept.line else "")
                    + f" and before its backward ran. Autograd checks versions only of "
                    f"tensors saved with save_for_backward, so {name}.backward silently used "
                    "the new values and its gradients are wrong."
                ),
                node=f"{name}Backward",
                locations=_locations(
                    (write.line if write is not None else None, "cause"),
                    (kept.stored, "saved"),
                    (kept.line, "created"),
                ),
                details={"function": name, "attribute": kept.slot},
            )
        )
    return found


def _grad_targets(events: Events) -> list[Finding]:
    if not any(b.error is None for b in events.backwards):
        return []
    return [
        make_finding(
            "GP118",
            message=(
                f"{op} at {_where(line)} was given a target that requires grad"
                + (f" (computed at {_where(origin)})" if origin else "")
                + ": backward() also differentiates through the target, so the model is "
                "pushed to move its targets toward its predictions (a DQN's TD target, an "
                "EMA teacher, a stop-gradient branch). Compute the target under "
                "torch.no_grad() or pass target.detach()."
            ),
            node=op,
            locations=_locations((origin or line, "cause"), (line, "read")),
        )
        for line, origin, op in events.grad_targets[:1]
    ]


def _weighted_log_probs(events: Events) -> list[Finding]:
    if not any(b.error is None for b in events.backwards):
        return []
    found = []
    for line, made, origin, count in events.weighted_log_probs[:1]:
        names = sorted(_names_at(made, store=True)) if made is not None else []
        name = names[0] if len(names) == 1 else None
        weight = f"{name!r}" if name else "the weight"
        found.append(
            make_finding(
                "GP123",
                message=(
                    f"A log-probability of chosen actions is multiplied at {_where(line)} by "
                    f"{weight}"
                    + (f" (made at {_where(made)})" if made is not None and made != line else "")
                    + ", which still requires grad"
                    + (f" (its graph comes from {_where(origin)})" if origin is not None else "")
                    + f" and reaches {count} parameter{'s' if count != 1 else ''} the "
                    "log-probability does not. backward() trains "
                    + ("them" if count != 1 else "it")
                    + " through this product too (gradient -log_prob × ∂weight), so the "
                    "critic or baseline behind the weight drifts toward raising "
                    "log-probabilities. Use "
                    + (f"{name}.detach()" if name else "weight.detach()")
                    + " in the policy term; train the critic with its own loss."
                ),
                tensor=name,
                locations=_locations((made or line, "cause"), (line, "read")),
            )
        )
    return found


def _scaled_clips(events: Events) -> list[Finding]:
    if not events.scaled_clips:
        return []
    line = events.scaled_clips[0]
    return [
        make_finding(
            "GP127",
            message=(
                f"Gradient clipping at {_where(line)} ran on gradients a GradScaler had "
                "multiplied by its loss scale (65536 at the start) and nobody unscaled: the "
                "norm it measures is the scaled one, so nearly every step is clipped to a "
                "tiny update (and clip_grad_value_ thresholds mean nothing). Call "
                "scaler.unscale_(optimizer) between backward() and the clipping."
            ),
            locations=_locations((line, "cause")),
        )
    ]


def _early_clips(events: Events) -> list[Finding]:
    if not events.steps or not events.early_clips:
        return []
    line = events.early_clips[0]
    return [
        make_finding(
            "GP119",
            message=(
                f"Gradient clipping at {_where(line)} ran when no backward() had produced "
                "gradients for the next optimizer step: it clipped stale or zeroed gradients, "
                "and the ones step() applies are not clipped at all. Clip between "
                "loss.backward() and optimizer.step()."
            ),
            locations=_locations((line, "cause")),
        )
    ]


def _flat_gradients(events: Events, modules: Sequence[torch.nn.Module]) -> list[Finding]:
    """GP120 when parameter gradients are exactly zero and the forward went through an op
    whose derivative is zero (round, floor, sign, ...): every parameter of a model, or the
    ones before that op while the ones after it learn."""
    if not events.flat_ops or not any(b.error is None for b in events.backwards):
        return []
    flat: list[str] = []
    learning = False  # some parameter got a gradient that is not all zero
    tops = _top_modules(modules)
    for top in tops:
        prefix = f"{type(top).__name__}." if len(tops) > 1 else ""  # layers called directly
        for name, param in top.named_parameters():
            grad = param.grad
            if grad is None or grad.device.type != "cpu":
                continue
            if bool(grad.count_nonzero()):
                learning = True
            else:
                flat.append(prefix + name)
    if not flat:
        return []
    every = not learning
    line, op = events.flat_ops[0]
    if every:
        what = "Every parameter gradient of a model is exactly zero"
        reach = "nothing before it can learn"
    else:
        names = ", ".join(flat[:4]) + (f" and {len(flat) - 4} more" if len(flat) > 4 else "")
        what = f"The gradients of {names} are exactly zero"
        reach = "the parameters before it cannot learn"
    return [
        make_finding(
            "GP120",
            message=(
                f"{what}, and the forward pass went through {op} at {_where(line)}, whose "
                f"derivative is zero everywhere it exists: {reach}. Use a differentiable "
                "relaxation there (the probabilities themselves, or a straight-through "
                "estimator x + (x.round() - x).detach())."
            ),
            node=op,
            locations=_locations((line, "cause")),
            details={"parameters": flat[:20]},
        )
    ]


def _leaf_backwards(events: Events) -> list[Finding]:
    if not events.leaf_backwards:
        return []
    order, line, made = events.leaf_backwards[0]
    earlier = [c for c in events.cuts.values() if c.kind in _LOSSY and c.order < order]
    # an argmax or comparison that lost the graph explains more than the .item() after it
    earlier = [c for c in earlier if c.kind == "non_differentiable"] or earlier
    cut = max(earlier, key=lambda c: c.order) if earlier else None
    return [
        make_finding(
            "GP115",
            message=(
                f"backward() at {_where(line)} was called on a leaf tensor"
                + (f" made at {_where(made)}" if made else "")
                + ": it has no graph behind it, so backward only fills that tensor's own "
                ".grad and no parameter gets a gradient."
                + (
                    f" The values it was made from lost their graph at {_where(cut.line)} "
                    f"({cut.op})."
                    if cut is not None
                    else ""
                )
                + " Keep the loss tensor itself instead of rebuilding it with "
                "torch.tensor(..., requires_grad=True)."
            ),
            locations=_locations((made or line, "cause"), (cut.line if cut else None, "created")),
            details={"leaf_line": made[1] if made else None},
        )
    ]


def _inference_uses(events: Events) -> list[Finding]:
    if not events.inference_uses:
        return []
    line, idents = events.inference_uses[0]
    cuts = [events.cuts[i] for i in idents if i in events.cuts]
    block = next((cut.context for cut in cuts if cut.context is not None), None)
    made = cuts[0].line if cuts else None
    return [
        make_finding(
            "GP114",
            message=(
                f"The operation at {_where(line)} was given a tensor made under "
                "torch.inference_mode()"
                + (f" (the block at {_where(block)}" if block else "")
                + (f", computed at {_where(made)})" if block and made else ")" if block else "")
                + ". Inference tensors can never be saved for backward. Use torch.no_grad() "
                "there instead, or .clone() the tensor after the block."
            ),
            locations=_locations(
                (block or made or line, "cause"), (made, "created"), (line, "error")
            ),
        )
    ]


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


def _zeroed(events: Events) -> list[Finding]:
    if not events.steps:
        return []  # no training loop: zeroing gradients after backward is nobody's bug
    return [
        make_finding(
            "GP110",
            message=(
                f"At {_where(line)} gradients were set to None after a backward() whose "
                "gradients no optimizer step had used yet: that backward's work is thrown "
                "away. If you accumulate over micro-batches, zero the gradients only right "
                "after optimizer.step()."
            ),
            locations=_locations((line, "cause")),
        )
        for line in events.zeroings[:1]
    ]


def _in_module(module: tuple[str, str] | None) -> str:
    if module is None:
        return ""
    name, kind = module
    return f" in module '{name}' ({kind})" if name else f" in the {kind} model's own forward"


def _parameter_name(ident: int, modules: Sequence[torch.nn.Module]) -> str | None:
    """The qualified name of the parameter with ``id`` ``ident`` in the outermost module
    (of the script's models) that holds it."""
    for module in _top_modules(modules):
        for name, param in module.named_parameters():
            if id(param) == ident:
                return name
    return None


def _nan_findings(events: Events, modules: Sequence[torch.nn.Module] = ()) -> list[Finding]:
    found: list[Finding] = []
    nan, inf = events.first_nan, events.first_inf
    if nan is not None and nan.in_step:
        found.append(_nan_from_step(nan, inf, events))
    elif nan is not None:
        pairs: list[tuple[SourceLine | None, LocationRole]] = [(nan.line, "cause")]
        if inf is not None and inf.order < nan.order:
            pairs.append((inf.line, "created"))
        found.append(
            make_finding(
                "GP201",
                message=(
                    f"The first NaN of the forward pass came from {nan.op} at "
                    f"{_where(nan.line)}"
                    + _in_module(nan.module)
                    + f" (output shape {nan.shape})"
                    + (
                        f"; an infinity appeared earlier, from {inf.op} at {_where(inf.line)}"
                        if inf is not None and inf.order < nan.order
                        else ""
                    )
                    + "."
                ),
                node=nan.op,
                module=nan.module[0] or nan.module[1] if nan.module else None,
                locations=_locations(*pairs),
            )
        )
    for ident, described, shape, is_nan in [] if events.amp else events.nan_grads[:1]:
        what = "NaN" if is_nan else "infinite"
        qualified = _parameter_name(ident, modules)
        name = qualified or described
        subject = f"parameter '{qualified}' {tuple(shape)}" if qualified else f"a {described}"
        if nan is not None and nan.in_step:
            message = (
                f"The gradient of {subject} is {what}, and the optimizer step at "
                f"{_where(nan.line)} applied it"
                + (
                    f"; it comes from the infinity {inf.op} made at {_where(inf.line)}"
                    if inf is not None and inf.order < nan.order
                    else ""
                )
                + " (see GP201)."
            )
            pairs = []
        elif nan is not None:
            message = (
                f"The gradient of {subject} is {what}; the forward pass already produced NaN "
                f"at {_where(nan.line)} (see GP201)."
            )
            pairs = []
        elif inf is not None:
            message = (
                f"The gradient of {subject} is {what}, although the forward values that "
                f"reached the loss were finite: {inf.op} at {_where(inf.line)} produced an "
                "infinity (shape "
                f"{inf.shape}) whose backward formula multiplies it by 0, giving NaN. This is "
                "typical of torch.where/masking: mask the input of the unsafe operation, not "
                "only its output."
            )
            pairs = [(inf.line, "cause")]
        elif events.nan_node is not None:
            record = events.nodes.get(events.nan_node)
            made = record.line if record is not None else None
            message = (
                f"The gradient of {subject} is {what} although the forward pass was finite: "
                f"the backward of {events.nan_node[0]} (made at {_where(made)}) turned finite "
                "gradients into NaN/Inf, at the edge of its domain (sqrt or norm at 0, log of "
                "0, division by 0). Add an eps inside it, or mask its input."
            )
            pairs = [(made, "cause")]
        else:
            message = (
                f"The gradient of {subject} is {what} although the forward pass was finite: a "
                "backward formula divided by zero or overflowed (sqrt/norm/pow at 0, log of 0)."
            )
            pairs = []
        found.append(
            make_finding(
                "GP202",
                message=message,
                tensor=name,
                locations=_locations(*pairs),
                details={"shape": list(shape)},
            )
        )
    return found


def _nan_from_step(nan: Any, inf: Any, events: Events) -> Finding:
    """GP201 when the first NaN was written by an optimizer step: the parameters took
    non-finite gradients, so the cause is wherever those came from."""
    message = (
        f"The first NaN of the run was written into the parameters by the optimizer step at "
        f"{_where(nan.line)} ({nan.op}): the gradients it applied were not finite, and every "
        "forward pass after it is NaN."
    )
    pairs: list[tuple[SourceLine | None, LocationRole]] = [(nan.line, "read")]
    if inf is not None and inf.order < nan.order:
        message += (
            f" They come from an infinity that {inf.op} produced earlier at {_where(inf.line)}"
            + _in_module(inf.module)
            + f" (shape {inf.shape}): an infinite value on the way to the loss makes the "
            "backward produce inf and NaN. Make that operation safe (log_softmax instead of "
            "log(softmax(...)), a clamp or an eps inside log, sqrt and division); if the "
            "values grew over several steps instead, lower the learning rate or clip the "
            "gradients."
        )
        pairs.insert(0, (inf.line, "cause"))
    else:
        message += " The forward values were finite: see GP202 for where the backward broke."
    return make_finding(
        "GP201",
        message=message,
        node=nan.op,
        locations=_locations(*pairs),
        details={"in_optimizer_step": True},
    )


def _grad_reads(events: Events) -> list[Finding]:
    found: list[Finding] = []
    seen: set[Any] = set()
    for read in events.grad_reads:
        if read.line in seen:
            continue
        seen.add(read.line)
        record = events.nodes.get(read.node) if read.node is not None else None
        made = record.line if record is not None else None
        op = read.node[0] if read.node else "an operation"
        if read.reparam is not None:
            found.append(_reparam_read(read, read.reparam, op))
            continue
        found.append(
            make_finding(
                "GP106",
                message=(
                    f".grad was read at {_where(read.line)} on a tensor of shape {read.shape} "
                    f"that is not a leaf: it was computed by {op} at {_where(made)}, so "
                    "autograd never fills its .grad. If you meant it to be a leaf, create it "
                    "with the right dtype/device directly (torch.tensor(..., dtype=..., "
                    "requires_grad=True)) or call .requires_grad_() after the conversion; "
                    "otherwise call retain_grad() before backward()."
                ),
                node=op,
                locations=_locations((made, "cause"), (read.line, "read")),
                details={"shape": list(read.shape)},
            )
        )
    return found


def _reparam_read(read: GradRead, reparam: Reparam, op: str) -> Finding:
    return make_finding(
        "GP106",
        message=(
            f".grad was read at {_where(read.line)} on `{reparam.tensor}` (shape "
            f"{read.shape}) of a module reparametrised by {reparam.how} at "
            f"{_where(reparam.line)}: since then `{reparam.tensor}` is recomputed from the "
            f"parameter `{reparam.name}` in every forward pass ({op}), so it is not a leaf "
            f"and its .grad stays None. Read `{reparam.name}.grad` instead"
            + (
                f", or call prune.remove(module, {reparam.tensor!r}) to make "
                f"`{reparam.tensor}` a plain parameter again."
                if reparam.how == "pruning"
                else ", or remove the parametrization (parametrize.remove_parametrizations)."
            )
        ),
        node=op,
        parameter=reparam.name,
        locations=_locations((read.line, "cause"), (reparam.line, "cause")),
        details={"shape": list(read.shape), "reparametrised_by": reparam.how},
    )


_LOSSY = frozenset({"non_differentiable", "item", "numpy", "autograd_grad"})


def _mixes(events: Events) -> list[Finding]:
    found: list[Finding] = []
    seen: set[Any] = set()
    if not any(b.error is None for b in events.backwards):
        return found
    for mix in events.mixes:
        if mix.line in seen:
            continue
        seen.add(mix.line)
        cuts = sorted((events.cuts[i] for i in mix.cuts), key=lambda c: c.order)
        # A detach or a no_grad block asked for by name is a choice (straight-through
        # estimators, PPO's old log-probabilities); a comparison, argmax, .item() or numpy
        # round trip that loses the graph on the way is the bug this finding is about.
        named = [c for c in cuts if c.kind in _LOSSY]
        if not named:
            continue
        where = ", ".join(f"{c.op} at {_where(c.line)}" for c in named[:3])
        found.append(
            make_finding(
                "GP113",
                message=(
                    f"At {_where(mix.line)} a term that carries no gradient was combined "
                    f"({mix.op}) with a value that does: it was computed from {where}, which "
                    "cut the "
                    "graph, so this term changes the loss value but contributes nothing to "
                    "any gradient."
                ),
                locations=_locations(*((c.line, "cause") for c in named[:2]), (mix.line, "read")),
                details={"cut_ops": [c.op for c in named]},
            )
        )
    return found


def _typos(events: Events) -> list[Finding]:
    return [
        make_finding(
            "GP111",
            message=(
                f"At {_where(line)} the attribute {name!r} was set on a tensor; tensors have "
                f"no such setting, so this only added a new Python attribute. You meant "
                f"{meant!r}: the parameter still requires grad and keeps training."
            ),
            locations=_locations((line, "cause")),
            details={"attribute": name, "meant": meant},
        )
        for line, name, meant in events.typos[:1]
    ]


def copy_freezes(events: Events, modules: Sequence[torch.nn.Module]) -> list[Finding]:
    """GP111 for ``requires_grad = False`` set on a copy of a parameter (``state_dict()``
    values are detached tensors sharing its memory) while the parameter still trains."""
    if not events.copy_freezes:
        return []
    params: dict[int, tuple[str, torch.nn.Parameter]] = {}
    for top in _top_modules(modules):
        for name, param in top.named_parameters():
            params.setdefault(_storage(param), (name, param))
    hits = [
        (line, params[storage][0])
        for line, storage in events.copy_freezes
        if storage in params and params[storage][1].requires_grad
    ]
    if not hits:
        return []
    line = hits[0][0]
    names = [name for where, name in hits if where == line]
    return [
        make_finding(
            "GP111",
            message=(
                f"At {_where(line)} requires_grad was set to False on a tensor that shares "
                f"memory with {', '.join(names[:4])}{' ...' if len(names) > 4 else ''} but is "
                "not the parameter (state_dict() returns detached copies): the parameter "
                "itself still requires grad and keeps training. Freeze the module's own "
                "parameters: for p in model.backbone.parameters(): p.requires_grad_(False)."
            ),
            parameter=names[0],
            locations=_locations((line, "cause")),
            details={"parameters": names},
        )
    ]


def empty_loads(events: Events) -> list[Finding]:
    """GP117 for ``load_state_dict(..., strict=False)`` calls that loaded nothing."""
    found: list[Finding] = []
    for line, unexpected, missing in events.empty_loads[:1]:
        prefix = _common_prefix(unexpected, missing)
        found.append(
            make_finding(
                "GP117",
                message=(
                    f"load_state_dict(strict=False) at {_where(line)} loaded none of its "
                    f"{len(unexpected)} keys: none matches a name in the model"
                    + (
                        f" (the checkpoint's keys start with {prefix!r}, which the model's "
                        "names do not have: it was saved from a DistributedDataParallel or "
                        "DataParallel wrapper)"
                        if prefix
                        else f" (for example {unexpected[0]!r})"
                    )
                    + ". The model keeps its initial weights, and code that selects "
                    "parameters by those keys (to freeze them) matches nothing. Strip the "
                    "prefix ({k.removeprefix('module.'): v for k, v in state.items()}) and "
                    "check the result's missing_keys/unexpected_keys."
                ),
                locations=_locations((line, "cause")),
                details={"unexpected_keys": unexpected[:20], "prefix": prefix},
            )
        )
    return found


def _common_prefix(unexpected: Sequence[str], missing: Sequence[str]) -> str | None:
    for prefix in ("module.", "_orig_mod.", "model."):
        if all(key.startswith(prefix) for key in unexpected):
            stripped = {key[len(prefix) :] for key in unexpected}
            if not missing or stripped & set(missing):
                return prefix
    return None


def optimizer_coverage(
    events: Events,
    modules: Sequence[torch.nn.Module],
    optimizers: Sequence[Any],
    inside: Mapping[int, torch.nn.Module | None],
) -> list[Finding]:
    """GP116: parameters that get gradients which no optimizer that stepped holds, because
    their module is not registered in the model that uses it (a plain list of layers) or
    was made after the optimizer collected the model's parameters (a replaced head)."""
    if not optimizers or not events.steps:
        return []
    held = {id(p) for opt in optimizers for group in opt.param_groups for p in group["params"]}
    made = [
        events.optimizer_lines[id(opt)] for opt in optimizers if id(opt) in events.optimizer_lines
    ]
    tops = _top_modules(modules)
    found: list[Finding] = []
    for module in modules:
        missed = [
            name
            for name, p in module.named_parameters(recurse=False)
            if p.requires_grad and p.grad is not None and id(p) not in held
        ]
        if not missed:
            continue
        kind = type(module).__name__
        line = events.module_lines.get(id(module))
        outer = inside.get(id(module))
        if outer is not None and not any(m is module for m in outer.modules()):
            message = (
                f"The {kind} made at {_where(line)} runs inside {type(outer).__name__} but is "
                "not registered in it (it is kept in a plain list, dict or other container "
                "nn.Module does not look into), so model.parameters() leaves out its "
                f"parameters ({', '.join(missed)}): they get gradients and no optimizer "
                "updates them. Hold it in nn.ModuleList / nn.ModuleDict, or assign it as an "
                "attribute."
            )
            pairs: list[tuple[SourceLine | None, LocationRole]] = [(line, "cause")]
        elif remade := _made_in_forward(events, module, missed):
            line = remade
            message = (
                f"{', '.join(missed)} of the {kind} {'are' if len(missed) > 1 else 'is'} "
                f"made at {_where(line)}, inside forward(), so no optimizer holds "
                f"{'them' if len(missed) > 1 else 'it'}: the gradients {'they get' if len(missed) > 1 else 'it gets'} "
                "are never applied (and when forward makes a new one on every call, the one "
                "the optimizer does hold no longer takes part). Create parameters once, in "
                "__init__, and only use them in forward (to reset values, write into the "
                "existing one under torch.no_grad())."
            )
            pairs = [(line, "cause")]
        else:
            order = events.module_orders.get(id(module))
            earlier = [m for m in made if order is not None and m[0] < order]
            if not earlier:
                continue  # built before the optimizer and left out: a choice, not this bug
            if not any(
                top is not module
                and any(m is module for m in top.modules())
                and any(id(p) in held for p in top.parameters())
                for top in tops
            ):
                continue  # not part of a model the optimizer trains: a separate computation
            where = max(earlier)[1]
            message = (
                f"The {kind} made at {_where(line)} gets gradients ({', '.join(missed)}) but "
                f"the optimizer built at {_where(where)}, before it, does not hold its "
                "parameters: the layer was created or replaced after the optimizer collected "
                "model.parameters(), so it never trains. Build the optimizer after the model "
                "is final (or add_param_group the new parameters)."
            )
            pairs = [(line, "cause"), (where, "cause")]
        found.append(
            make_finding(
                "GP116",
                message=message,
                module=kind,
                parameter=missed[0],
                locations=_locations(*pairs),
                details={"parameters": missed},
            )
        )
    return found


def _made_in_forward(
    events: Events, module: torch.nn.Module, names: Sequence[str]
) -> SourceLine | None:
    """Where ``module``'s parameters ``names`` were made, when that was inside a forward."""
    for name in names:
        line = events.parameter_lines.get(id(getattr(module, name, None)))
        if line is not None and line[2] == "forward":
            return line
    return None


def _top_modules(modules: Iterable[torch.nn.Module]) -> list[torch.nn.Module]:
    seen = list(modules)
    inner: set[int] = set()
    for module in seen:
        for child in module.modules():
            if child is not module:
                inner.add(id(child))
    return [m for m in seen if id(m) not in inner]


def _cut_above(events: Events, start: NodeKey | None, limit: int = 20_000) -> Any:
    """The first cut reached going up (towards the loss) from ``start``, the node that first
    used a parameter: the parameter fed a graph that was then detached."""
    if start is None:
        return None
    seen = {start}
    queue = [start]
    for key in queue:
        cut = events.cut_inputs.get(key)
        if cut is not None:
            return events.cuts[cut]
        record = events.nodes.get(key)
        if record is None:
            continue
        for parent in record.consumers:
            if parent not in seen and len(seen) < limit:
                seen.add(parent)
                queue.append(parent)
    return None


def _leaf_cut(events: Events, ident: int) -> Any:
    """The latest cut a parameter fed directly before the last backward (``w.data``, a
    layer run under no_grad), or None."""
    last = events.backwards[-1].order if events.backwards else None
    for cut_id in reversed(events.leaf_cuts.get(ident, ())):
        cut = events.cuts[cut_id]
        if last is None or cut.order < last:
            return cut
    return None


def _routed(top: torch.nn.Module, called: set[int]) -> set[int]:
    """ids of modules never called that sit in a ModuleList/ModuleDict beside a called
    module of their own type: experts a router did not pick this time (mixture of experts,
    a head per task), not a mistake; only DistributedDataParallel minds them."""
    routed: set[int] = set()
    for container in top.modules():
        if not isinstance(container, (torch.nn.ModuleList, torch.nn.ModuleDict)):
            continue
        members = list(container.children())
        used = {type(m) for m in members if id(m) in called}
        for member in members:
            if id(member) not in called and type(member) in used:
                routed.update(id(m) for m in member.modules())
    return routed


def _unused(events: Events, modules: Iterable[torch.nn.Module]) -> list[Finding]:
    if not events.backwards or events.backwards[-1].error is not None:
        return []  # a failed backward stops half-way: missing grads prove nothing
    found: list[Finding] = []
    modules = list(modules)
    called = {id(module) for module in modules}
    for top in _top_modules(modules):
        owners = {
            id(param): id(module)
            for module in top.modules()
            for param in module.parameters(recurse=False)
        }
        named = list(top.named_parameters())
        trainable = [(n, p) for n, p in named if p.requires_grad]
        if events.last_inputs is not None:  # backward(inputs=...): the rest on purpose
            trainable = [(n, p) for n, p in trainable if id(p) in events.last_inputs]
        idle_only: set[int] = set()
        if not any(p.grad is not None for _, p in trainable):
            # A model without any gradient is not judged (a frozen teacher, a target
            # network), unless an optimizer stepped it while others had gradients, or
            # stepped it right after a backward that reached none of it; the latter only
            # when a cut on the way is found (not a zero_grad() in between: GP110).
            stepped = events.starved | events.idle
            trainable = [(n, p) for n, p in trainable if id(p) in stepped - events.fed]
            idle_only = {id(p) for _, p in trainable} - events.starved
            if not trainable:
                continue
        ddp = hasattr(top, "module") and type(top).__name__ == "DistributedDataParallel"
        missing = [(n, p) for n, p in trainable if p.grad is None]
        if missing and not ddp:
            routed = _routed(top, called)
            missing = [(n, p) for n, p in missing if owners.get(id(p)) not in routed]
        by_cause: dict[Any, list[str]] = {}
        for name, param in missing:
            if ddp and name.startswith("module."):
                name = name[len("module.") :]
            cut = events.rewrapped.get(id(param))
            how = "rewrapped"
            if cut is None:
                cut = _cut_above(events, events.first_use.get(id(param)))
                how = "cut"
            if cut is None:
                cut = _leaf_cut(events, id(param))
            line = cut.line if cut is not None else events.parameter_lines.get(id(param))
            kind = (how, cut.op, cut.kind) if cut is not None else None
            if cut is None and id(param) in idle_only:
                continue
            if cut is None and owners.get(id(param)) in called:
                kind = ("ran", "", "")
            by_cause.setdefault((kind, line), []).append(name)
        for (kind, line), names in by_cause.items():
            if kind is not None and kind[0] == "cut" and kind[2] == "data":
                why = (
                    f"they were used only through .data at {_where(line)}, which is their "
                    "memory without their graph, so nothing flows back to them. Use the "
                    "parameter itself there (self.weight, not self.weight.data)."
                )
            elif kind is not None and kind[0] == "cut":
                how = {
                    "detach": "",
                    "no_grad": " under torch.no_grad()",
                    "autograd_grad": " (autograd.grad without create_graph)",
                }.get(kind[2], " (not differentiable)")
                why = (
                    f"they were used, but the graph from them was cut at {_where(line)} by "
                    f"{kind[1]}(){how}, so nothing flows back to them."
                )
            elif kind is not None and kind[0] == "ran":
                why = (
                    f"their module (made at {_where(line)}) ran, but no use of them reached "
                    "the loss with autograd on: look in its forward for .data, "
                    "torch.no_grad()/inference_mode, or a checkpoint(use_reentrant=True) "
                    "whose inputs need no grad."
                )
            elif kind is not None:
                why = (
                    f"the graph from them was cut at {_where(line)}, where a new nn.Parameter "
                    "was made from a computed tensor: the new parameter is a fresh leaf, so "
                    "nothing flows back to the parameters it was computed from."
                )
            else:
                why = (
                    "the loss does not depend on them: the module they belong to (made at "
                    f"{_where(line)}) was not used on the path to the loss"
                    + (
                        "; under DistributedDataParallel this also makes the next iteration "
                        "fail unless find_unused_parameters=True."
                        if ddp
                        else "."
                    )
                )
            found.append(
                make_finding(
                    "GP107",
                    message=(
                        f"{len(names)} parameter{'s' if len(names) != 1 else ''} got no "
                        f"gradient after backward(): {', '.join(names[:8])}"
                        + (" ..." if len(names) > 8 else "")
                        + f"; {why}"
                    ),
                    parameter=names[0],
                    module=type(top).__name__,
                    locations=_locations(
                        (line, "created" if kind is not None and kind[0] == "ran" else "cause")
                    ),
                    details={"parameters": names, "ddp": ddp},
                )
            )
    return found
