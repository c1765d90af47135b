"""Terminal view (rich) of a watch session: findings, then the latest statistics, worst first.

Consumes plain data only (:class:`ReportData`, built by ``WatchSession``).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Group
from rich.text import Text

from gradprobe.render._fit import Column, FittedTable
from gradprobe.render.findings import findings_text, findings_view

if TYPE_CHECKING:
    from rich.console import RenderableType

    from gradprobe._watch._gather import RankedWatch
    from gradprobe._watch.records import GradRecord, OutputRecord, StepRecord, TensorStats
    from gradprobe.findings import Finding

__all__ = ["ReportData", "ranked_text", "watch_report", "watch_text"]

MAX_ROWS = 12


@dataclass(frozen=True)
class ReportData:
    """What the report shows."""

    model: str
    state: str
    steps: int
    sample_every: int
    records: tuple[StepRecord, ...]
    findings: tuple[Finding, ...]
    notes: tuple[str, ...]


def _num(value: float | None) -> str:
    if value is None:
        return "–"
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:.3g}"


def _shape(shape: tuple[int, ...]) -> str:
    return "×".join(str(size) for size in shape) if shape else "scalar"


def _nonfinite(stats: TensorStats) -> str:
    if stats.nan_count is not None and stats.inf_count is not None:
        if not stats.nan_count and not stats.inf_count:
            return "0"
        return f"{stats.nan_count}/{stats.inf_count}"
    return "0" if stats.finite else "yes"


def _magnitude(stats: TensorStats) -> float:
    top = stats.max_abs
    if top is None:  # between samples: only whether it was finite is known
        return 0.0 if stats.finite else math.inf
    return math.inf if math.isnan(top) else top


def _latest(records: Sequence[StepRecord], want: str) -> StepRecord | None:
    fallback = None
    for record in reversed(records):
        if want == "activations" and record.activations:
            if record.sampled:
                return record
            fallback = fallback or record
        if want == "parameters" and record.parameter_grads:
            if any(s.norm is not None for s in record.parameter_grads.values()):
                return record
            fallback = fallback or record
    return fallback


def _activation_table(record: StepRecord, flagged: set[str], limit: int) -> tuple[FittedTable, int]:
    grads: dict[tuple[str, int, str], GradRecord] = {
        (g.name, g.call, g.output): g for g in record.output_grads
    }

    def severity(a: OutputRecord) -> tuple[int, float]:
        level = 3 if not a.stats.finite else 2 if a.module in flagged else 0
        return (-level, -_magnitude(a.stats))

    rows = sorted(record.activations, key=severity)
    cells: list[list[str]] = []
    styles: list[str] = []
    for a in rows[:limit]:
        s = a.stats
        grad = grads.get((a.module, a.call, a.output))
        styles.append("red" if not s.finite else "yellow" if a.module in flagged else "")
        cells.append(
            [
                a.label,
                _shape(s.shape),
                _num(s.mean),
                _num(s.std),
                _num(s.min),
                _num(s.max),
                "–" if s.zero_fraction is None else f"{s.zero_fraction:.0%}",
                _nonfinite(s),
                "–" if grad is None else _num(grad.stats.norm),
            ]
        )
    columns = [
        Column("module", wrap=True),
        Column("shape"),
        *(Column(name, justify="right") for name in ("mean", "std", "min", "max", "zeros")),
        Column("NaN/Inf", justify="right"),
        Column("grad\nnorm", justify="right"),
    ]
    table = FittedTable(
        f"activations at step {record.step}, worst first", columns, cells, keys=2, styles=styles
    )
    return table, max(len(rows) - limit, 0)


def _parameter_table(record: StepRecord, flagged: set[str], limit: int) -> tuple[FittedTable, int]:
    grads = record.parameter_grads
    rows: list[tuple[int, float, str]] = []
    for name, stats in grads.items():
        level = 3 if not stats.finite else 2 if name in flagged else 0
        rows.append((-level, -(stats.norm if stats.norm is not None else _magnitude(stats)), name))
    rows.extend((-2, 0.0, name) for name in record.without_grad)
    rows.sort()
    cells: list[list[str]] = []
    styles: list[str] = []
    for _, _, name in rows[:limit]:
        found = grads.get(name)
        ratio = record.update_ratios.get(name)
        if found is None:
            cells.append([name, "", "no gradient", "", "", ""])
            styles.append("yellow")
            continue
        stats = found
        styles.append("red" if not stats.finite else "yellow" if name in flagged else "")
        cells.append(
            [
                name,
                _shape(stats.shape),
                _num(stats.norm),
                _num(stats.max_abs),
                _num(stats.mean_abs),
                _num(ratio),
            ]
        )
    columns = [
        Column("parameter"),
        Column("shape"),
        *(
            Column(name, justify="right")
            for name in ("grad norm", "max |grad|", "mean |grad|", "update\nratio")
        ),
    ]
    table = FittedTable(
        f"parameter gradients at step {record.step}, worst first",
        columns,
        cells,
        keys=2,
        styles=styles,
    )
    return table, max(len(rows) - limit, 0)


def _header(data: ReportData) -> Text:
    steps = f"{data.steps} step" + ("" if data.steps == 1 else "s")
    sampled = "every step" if data.sample_every == 1 else f"every {data.sample_every} steps"
    return Text.assemble(
        ("watch ", "bold"),
        (data.model, "bold"),
        f" ({data.state}): {steps}, full statistics {sampled}",
    )


def watch_report(data: ReportData, *, max_rows: int = MAX_ROWS) -> RenderableType:
    """Header, findings, the activation and parameter tables, and notes."""
    return Group(
        _header(data),
        findings_view(list(data.findings), ok_text="no findings"),
        *_statistics(data, max_rows),
    )


def watch_text(data: ReportData, *, width: int | None = None, max_rows: int = MAX_ROWS) -> str:
    """The report as plain text (``str(session)``) at most ``width`` columns wide (default:
    the terminal's, ``COLUMNS``, or 80 in a pipe): the findings as
    :func:`~gradprobe.render.findings.findings_text` writes them, then the tables."""
    import shutil

    from gradprobe.render.text import to_text

    if width is None:
        width = shutil.get_terminal_size((80, 24)).columns

    count = len(data.findings)
    found = f"{count} finding{'' if count == 1 else 's'}" if count else "no findings"
    lines = [findings_text(data.findings, header=f"{_header(data).plain}; {found}", width=width)]
    statistics = _statistics(data, max_rows)
    if statistics:
        text = to_text(Group(*statistics), width=width)
        lines.extend(line.rstrip() for line in text.rstrip().splitlines())
    return "\n".join(lines)


def _statistics(data: ReportData, max_rows: int) -> list[RenderableType]:
    """The activation and parameter tables of the latest steps that have them, and notes."""
    parts: list[RenderableType] = []
    flagged_modules = {f.module for f in data.findings if f.module and f.code != "GP107"}
    flagged_params = {f.parameter for f in data.findings if f.parameter}
    for finding in data.findings:
        if finding.code == "GP204":
            flagged_params.update(finding.details.get("norms", {}))
    activations = _latest(data.records, "activations")
    if activations is not None:
        table, more = _activation_table(activations, flagged_modules, max_rows)
        parts.extend((Text(), table))
        if more:
            parts.append(Text(f"({more} more rows not shown)", style="dim"))
    parameters = _latest(data.records, "parameters")
    if parameters is not None:
        table, more = _parameter_table(parameters, {p for p in flagged_params if p}, max_rows)
        parts.extend((Text(), table))
        if more:
            parts.append(Text(f"({more} more rows not shown)", style="dim"))
    parts.extend(Text(f"note: {note}", style="yellow") for note in data.notes)
    return parts


def ranked_text(ranked: RankedWatch, *, width: int | None = None, max_rows: int = MAX_ROWS) -> str:
    """The merged report of a distributed run's watch sessions (``str(session.gather())``):
    findings with their ranks, each rank's gradient norms side by side (most different
    first), and notes."""
    import shutil

    from gradprobe.render.text import to_text

    if width is None:
        width = shutil.get_terminal_size((80, 24)).columns
    ranks = ", ".join(map(str, ranked.ranks))
    counts = sorted(set(ranked.steps.values()))
    steps = " or ".join(map(str, counts)) + (" step" if counts == [1] else " steps")
    count = len(ranked.findings)
    found = f"{count} finding{'' if count == 1 else 's'}" if count else "no findings"
    header = f"watch {ranked.model} on {len(ranked.ranks)} ranks ({ranks}): {steps}; {found}"
    lines = [findings_text(list(ranked.findings), header=header, width=width)]
    rows = ranked.gradient_norms()
    if rows:
        columns = [
            Column("parameter"),
            *(Column(f"rank {rank}", justify="right") for rank in ranked.ranks),
            Column("largest /\nsmallest", justify="right"),
        ]
        cells = []
        for name, norms in rows[:max_rows]:
            values = [norms.get(rank) for rank in ranked.ranks]
            known = [v for v in values if v is not None]
            top, low = max(known, default=0.0), min(known, default=0.0)
            spread = "" if math.isnan(top) or math.isnan(low) else _num(top / low) if low else "inf"
            cells.append([name, *(_num(v) for v in values), spread if top else ""])
        table = FittedTable(
            "local gradient norms per rank",
            columns,
            cells,
            keys=1,
        )
        lines.append("")
        lines.extend(line.rstrip() for line in to_text(table, width=width).rstrip().splitlines())
        if len(rows) > max_rows:
            lines.append(f"({len(rows) - max_rows} more rows not shown)")
    lines.extend(
        textwrap.fill(f"note: {note}", width=width, subsequent_indent="  ") for note in ranked.notes
    )
    return "\n".join(lines)
