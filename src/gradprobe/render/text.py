"""Terminal views (rich) of graphs and leaf reports. Consumes data only; never walks autograd."""

from __future__ import annotations

import io
import shutil
from collections import Counter
from typing import TYPE_CHECKING

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from gradprobe.render._fit import Column, FittedTable

if TYPE_CHECKING:
    from rich.console import RenderableType

    from gradprobe.graph import Graph
    from gradprobe.leaves import LeafReport

__all__ = ["graph_summary", "leaf_table", "to_text"]

_TOP_OPS = 6


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(size) for size in shape) + ")" if shape else "scalar"


def _numel(shape: tuple[int, ...]) -> int:
    total = 1
    for size in shape:
        total *= size
    return total


def graph_summary(graph: Graph) -> RenderableType:
    """A few lines: size, roots, parameters, the commonest ops, and any notes."""
    params = graph.parameters
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    table.add_row(
        "graph",
        f"{len(graph.nodes)} nodes, {len(graph.edges)} edges, depth {graph.depth}",
    )
    for root in graph.roots:
        where = graph.nodes[root.node].name if root.node is not None else "no grad_fn"
        table.add_row("root", Text(f"{root.name} {_shape(root.shape)} {root.dtype} ← {where}"))
    table.add_row(
        "parameters",
        f"{len(params)} reached ({sum(_numel(p.shape) for p in params):,} values); "
        f"{sum(1 for p in params if p.has_grad)} with .grad",
    )
    table.add_row("saved tensors", str(graph.saved_count))
    ops = Counter(node.name for node in graph.nodes if node.kind != "accumulate_grad")
    if ops:
        common = ", ".join(f"{name} ×{count}" for name, count in ops.most_common(_TOP_OPS))
        table.add_row("ops", common)
    parts: list[RenderableType] = [table]
    parts.extend(Text(f"note: {note}", style="yellow") for note in graph.notes)
    return Group(*parts)


def _flag(value: bool | None) -> Text:
    if value is None:
        return Text("–", style="dim")
    return Text("yes", style="green") if value else Text("no", style="red")


def leaf_table(report: LeafReport) -> RenderableType:
    """One row per tensor, those missing a ``.grad`` first; the reasons grouped below."""
    title = "leaves and named tensors"
    if report.graph_roots:
        title += " (graph of " + ", ".join(report.graph_roots) + ")"
    rows = sorted(report.rows, key=lambda row: row.has_grad or not row.requires_grad)
    cells: list[list[str | Text]] = [
        [
            Text(row.name),
            row.kind,
            _dims(row.shape),
            _flag(row.is_leaf),
            _flag(row.requires_grad),
            _flag(row.retains_grad),
            Text("set", style="green") if row.has_grad else Text("None", style="red"),
        ]
        for row in rows
    ]
    columns = [
        Column("tensor"),
        Column("kind"),
        Column("shape"),
        Column("is\nleaf"),
        Column("requires\ngrad"),
        Column("retains\ngrad"),
        Column(".grad"),
    ]
    table = FittedTable(title, columns, cells, keys=3)
    reasons: dict[str, list[str]] = {}
    for row in rows:
        if row.note and row.requires_grad:
            reasons.setdefault(row.note, []).append(row.name)
    notes = [Text(f"note: {note}", style="yellow") for note in report.notes]
    if not reasons:
        return Group(table, *notes) if notes else table
    why = Table.grid(padding=(0, 1))
    why.add_column(no_wrap=True)
    why.add_column()
    for reason, names in reasons.items():
        line = Text(", ".join(names), style="bold")
        line.append(f": {reason}", style="not bold")
        why.add_row("  •", line)
    return Group(table, Text(), Text("why .grad is None:", style="bold"), why, *notes)


def _dims(shape: tuple[int, ...]) -> str:
    """``8×3×3×3``: a shape without spaces, so a narrow table never wraps inside it."""
    return "×".join(str(size) for size in shape) if shape else "scalar"


def to_text(renderable: object, width: int | None = None) -> str:
    """Render anything rich can print to plain text (no colour), e.g. for logs and tests.

    ``width`` defaults to the terminal's: ``COLUMNS`` when set, else the terminal's own
    width, else 80 (a pipe, a CI log). Trailing spaces are left out.
    """
    if width is None:
        width = shutil.get_terminal_size((80, 24)).columns
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return "".join(line.rstrip() + "\n" for line in console.export_text().splitlines())
