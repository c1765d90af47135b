"""One report from every process of a diagnosed run (see :mod:`gradprobe._distributed`).

Each process's findings come with its rank (the one ``torch.distributed`` gave it, else
torchrun's ``RANK``); findings equal on several ranks are kept once, with
``details["ranks"]`` listing them. The cross-rank findings
(:func:`gradprobe.checks.distributed.across_ranks`) come first: they explain the per-rank
symptoms that follow.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gradprobe import _ranklog
from gradprobe.checks.distributed import across_ranks
from gradprobe.findings import Finding, Location

__all__ = ["Merged", "finding_from_dict", "merge"]


@dataclass(frozen=True)
class Merged:
    """The merged findings, the ranks that took part, and how many processes recorded."""

    findings: tuple[Finding, ...]
    ranks: tuple[int, ...]
    processes: int


def finding_from_dict(data: Mapping[str, Any]) -> Finding:
    """A :class:`Finding` back from its ``to_dict()`` (without its graph slice)."""
    locations = tuple(
        Location(
            file=str(loc["file"]),
            line=int(loc["line"]),
            role=loc["role"],
            function=loc.get("function"),
            text=loc.get("text"),
        )
        for loc in data.get("locations", [])
    )
    return Finding(
        code=str(data["code"]),
        kind=str(data["kind"]),
        title=str(data["title"]),
        message=str(data["message"]),
        hint=str(data.get("hint") or ""),
        tensor=data.get("tensor"),
        node=data.get("node"),
        module=data.get("module"),
        parameter=data.get("parameter"),
        locations=locations,
        details=dict(data.get("details") or {}),
    )


def _rank(entries: Sequence[Mapping[str, Any]]) -> int | None:
    """The rank torch.distributed gave the process (its ``rank`` notes), else the one its
    launcher announced (``RANK``)."""
    for kinds in (("rank", "ddp_init", "ddp_ready"), ("process", "findings")):
        for entry in entries:
            rank = entry.get("rank")
            if entry.get("kind") in kinds and isinstance(rank, int):
                return rank
    return None


def _with_ranks(finding: Finding, ranks: Sequence[int]) -> Finding:
    if not ranks:
        return finding
    return dataclasses.replace(finding, details={**finding.details, "ranks": sorted(ranks)})


def _drop_explained(found: dict[Finding, list[int]]) -> None:
    """A rank's GP107 about parameters that GP411 already names (unused on that rank,
    with the call that did not run there) says less: it is left out. So does GP163, one
    rank's reading of DDP's own error ("Expected to have finished reduction"), when GP411
    names the parameters across the ranks."""
    explained: set[tuple[str, int]] = set()
    for finding in found:
        if finding.code == "GP411":
            for rank in finding.details.get("unused_on", []):
                explained.update((str(name), rank) for name in finding.details["parameters"])
    if explained:
        for finding in [f for f in found if f.code == "GP163"]:
            del found[finding]
    for finding, holders in list(found.items()):
        names = finding.details.get("parameters", [])
        if finding.code != "GP107" or not holders or not names:
            continue
        if all((str(name), rank) in explained for name in names for rank in holders):
            del found[finding]


def merge(
    folder: str | os.PathLike[str],
    own: Sequence[Finding] = (),
    own_pid: int | None = None,
) -> Merged:
    """Every process's findings in ``folder``, merged. ``own`` are the findings of the
    process ``own_pid`` (this one) as objects, kept with their graph slices."""
    notes = _ranklog.read(folder)
    if own_pid is not None and own_pid not in notes and own:
        notes[own_pid] = []
    ranks = {pid: _rank(entries) for pid, entries in notes.items()}
    by_rank: dict[int, list[Mapping[str, Any]]] = {}
    for pid, entries in notes.items():
        rank = ranks[pid]
        if rank is not None:
            by_rank.setdefault(rank, []).extend(entries)
    several = len(notes) > 1
    found: dict[Finding, list[int]] = {}
    for finding in across_ranks(by_rank):
        found.setdefault(finding, [])
    order = sorted(notes, key=lambda pid: (ranks[pid] is not None, ranks[pid] or 0, pid))
    for pid in order:
        if pid == own_pid:
            local = list(own)
        else:
            local = [
                finding_from_dict(data)
                for entry in notes[pid]
                if entry.get("kind") == "findings"
                for data in entry.get("findings", [])
            ]
        rank = ranks[pid]
        for finding in local:
            holders = found.setdefault(finding, [])
            if several and rank is not None and rank not in holders:
                holders.append(rank)
    _drop_explained(found)
    findings = tuple(_with_ranks(finding, holders) for finding, holders in found.items())
    return Merged(findings, tuple(sorted(by_rank)), len(notes))
