"""``session.gather()``: the watch results of every rank of a distributed run, on one rank.

A collective, like :func:`torch.distributed.gather_object` (which it uses): every rank of
the group calls it; each sends its session's history, findings and notes through the
group, and the destination rank gets a :class:`RankedWatch`, the others ``None``. Nothing
crosses ranks while training: watch's hooks stay local to each process and never touch
DDP's reducer, so gradients are the same with and without watching.

The merged view answers what a per-rank log cannot: a finding seen on several ranks is
shown once with its ranks; gradients are compared rank by rank (each rank's hooks see its
local gradients, before DDP averages them, so a rank whose data shard is off stands out);
and ranks that ran different numbers of steps are named, the usual start of a DDP hang.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gradprobe._watch.records import StepRecord, json_number
from gradprobe.errors import GradprobeTypeError, GradprobeValueError, describe
from gradprobe.findings import Finding

if TYPE_CHECKING:
    from rich.console import Console

    from gradprobe._watch.session import WatchSession

__all__ = ["RankedWatch", "gather_sessions"]

FORMAT = 1
"""Version of the JSON layout written by :meth:`RankedWatch.to_dict`."""


@dataclass(frozen=True)
class _RankPart:
    """What one rank sends: plain, picklable data."""

    rank: int
    model: str
    steps: int
    history: tuple[StepRecord, ...]
    findings: tuple[Finding, ...]
    notes: tuple[str, ...]
    session: dict[str, Any]  # the session's to_dict()


def _distributed() -> Any:
    import torch.distributed as dist

    if not dist.is_available() or not dist.is_initialized():
        msg = (
            "session.gather() merges the sessions of a distributed run's ranks and needs "
            "an initialized process group: call it on every rank after "
            "torch.distributed.init_process_group() and before destroy_process_group(); in a "
            "single process, read the session itself (print(session), session.to_dict())."
        )
        raise GradprobeValueError(msg)
    return dist


def gather_sessions(session: WatchSession, dst: int = 0, group: Any = None) -> RankedWatch | None:
    """Send ``session``'s results to rank ``dst`` of ``group`` (default: the world); the
    merged :class:`RankedWatch` there, ``None`` on the other ranks."""
    if isinstance(dst, bool) or not isinstance(dst, int):
        msg = f"session.gather(dst=...) takes a global rank (an int), got {describe(dst)}"
        raise GradprobeTypeError(msg)
    dist = _distributed()
    ranks = dist.get_process_group_ranks(group or dist.group.WORLD)
    if dst not in ranks:
        msg = (
            f"session.gather(dst={dst}): rank {dst} is not in the group, whose ranks are "
            f"{sorted(ranks)}"
        )
        raise GradprobeValueError(msg)
    data = session.to_dict()  # one host copy; the rest is read from it
    part = _RankPart(
        rank=dist.get_rank(),
        model=str(data["options"]["model"]),
        steps=session.steps,
        history=session.history,
        findings=tuple(session.findings()),
        notes=tuple(session.notes),
        session=data,
    )
    received: list[Any] | None = [None] * len(ranks) if dist.get_rank() == dst else None
    dist.gather_object(part, received, dst=dst, group=group)
    if received is None:
        return None
    return RankedWatch.merge([p for p in received if isinstance(p, _RankPart)])


def _finding_key(finding: Finding) -> tuple[Any, ...]:
    places = tuple((loc.file, loc.line, loc.role) for loc in finding.locations)
    return (finding.code, finding.tensor, finding.node, finding.module, finding.parameter, places)


@dataclass(frozen=True)
class RankedWatch:
    """The watch sessions of all ranks, merged (from :meth:`WatchSession.gather`).

    ``findings`` holds each finding once, the first rank's, with ``details["ranks"]``
    listing every rank where it was found; ``history`` maps each rank to its steps.
    """

    ranks: tuple[int, ...]
    model: str
    steps: Mapping[int, int]
    history: Mapping[int, tuple[StepRecord, ...]]
    findings: tuple[Finding, ...]
    notes: tuple[str, ...]
    sessions: Mapping[int, dict[str, Any]]

    @classmethod
    def merge(cls, parts: Sequence[_RankPart]) -> RankedWatch:
        parts = sorted(parts, key=lambda p: p.rank)
        found: dict[tuple[Any, ...], tuple[Finding, list[int]]] = {}
        for part in parts:
            for finding in part.findings:
                found.setdefault(_finding_key(finding), (finding, []))[1].append(part.rank)
        findings = tuple(
            dataclasses.replace(f, details={**f.details, "ranks": sorted(set(r))})
            for f, r in found.values()
        )
        steps = {p.rank: p.steps for p in parts}
        notes: list[str] = []
        if len(set(steps.values())) > 1:
            counts = ", ".join(f"rank {rank}: {n}" for rank, n in steps.items())
            notes.append(
                f"the ranks ran different numbers of steps ({counts}). Under "
                "DistributedDataParallel every rank must run the same number of backward "
                "passes, or the ranks with more wait for the others until the timeout: give "
                "each rank the same number of batches (DistributedSampler with "
                "drop_last=True) or wrap the loop in torch.distributed.algorithms.Join."
            )
        for part in parts:
            notes.extend(f"rank {part.rank}: {note}" for note in part.notes)
        return cls(
            ranks=tuple(p.rank for p in parts),
            model=parts[0].model if parts else "",
            steps=steps,
            history={p.rank: p.history for p in parts},
            findings=findings,
            notes=tuple(notes),
            sessions={p.rank: p.session for p in parts},
        )

    def gradient_norms(self) -> list[tuple[str, dict[int, float]]]:
        """``(parameter, {rank: gradient norm})`` at each rank's latest step with full
        statistics, most different across ranks first (the ratio of the largest norm to the
        smallest; a rank without that parameter's gradient counts as 0)."""
        per_rank: dict[int, dict[str, float]] = {}
        for rank, records in self.history.items():
            latest = next((r for r in reversed(records) if r.sampled and r.parameter_grads), None)
            if latest is None:
                continue
            per_rank[rank] = {
                name: stats.norm if stats.norm is not None else math.nan
                for name, stats in latest.parameter_grads.items()
            }
        names: dict[str, None] = {}
        for norms in per_rank.values():
            names.update(dict.fromkeys(norms))
        rows = [
            (name, {rank: norms.get(name, 0.0) for rank, norms in per_rank.items()})
            for name in names
        ]
        rows.sort(key=lambda row: -_spread(row[1].values()))
        return rows

    def to_dict(self) -> dict[str, Any]:
        """``{"format", "ranks", "model", "steps", "findings", "notes", "gradient_norms",
        "sessions"}``, JSON-ready (``sessions`` maps each rank to its ``to_dict()``)."""
        return {
            "format": FORMAT,
            "ranks": list(self.ranks),
            "model": self.model,
            "steps": {str(rank): n for rank, n in self.steps.items()},
            "findings": [finding.to_dict() for finding in self.findings],
            "notes": list(self.notes),
            "gradient_norms": [
                {"parameter": name, "norms": {str(r): json_number(v) for r, v in norms.items()}}
                for name, norms in self.gradient_norms()
            ],
            "sessions": {str(rank): data for rank, data in self.sessions.items()},
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def __str__(self) -> str:
        from gradprobe.render.watch import ranked_text

        return ranked_text(self)

    def report(self, console: Console | None = None) -> None:
        """Print :func:`str` of this to ``console`` (a ``rich.console.Console``) or stdout."""
        from rich.console import Console

        given: object = console
        if given is not None and not isinstance(given, Console):
            msg = f"report(console=...) takes a rich.console.Console, got {describe(given)}"
            raise GradprobeTypeError(msg)
        (console or Console()).print(str(self), markup=False, highlight=False)


def _spread(values: Any) -> float:
    """Largest over smallest of non-negative numbers (inf when the smallest is 0 and the
    largest is not; nan counts as the largest)."""
    numbers = list(values)
    if any(math.isnan(v) for v in numbers):
        return math.inf
    top, low = max(numbers, default=0.0), min(numbers, default=0.0)
    if top == 0:
        return 1.0
    return top / low if low > 0 else math.inf
