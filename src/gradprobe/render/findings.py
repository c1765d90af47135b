"""Terminal views (rich) of findings. Consumes :class:`~gradprobe.findings.Finding` data only."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from rich.console import RenderableType

    from gradprobe.findings import Finding

__all__ = ["finding_panel", "findings_view"]


def finding_panel(finding: Finding) -> RenderableType:
    """One finding as a panel: code and title, the message, what is involved, the fix."""
    body = Table.grid(padding=(0, 2))
    body.add_column(style="bold")
    body.add_column()
    body.add_row("what", Text(finding.message))
    for label, value in (
        ("tensor", finding.tensor),
        ("node", finding.node),
        ("module", finding.module),
        ("parameter", finding.parameter),
    ):
        if value:
            body.add_row(label, Text(value))
    for location in finding.locations:
        where = f"{_short(location.file)}:{location.line}"
        if location.function:
            where += f" in {location.function}"
        if location.text:
            where += f"\n  {location.text}"
        body.add_row(location.role, Text(where))
    if finding.hint:
        body.add_row("fix", Text(finding.hint, style="green"))
    body.add_row("docs", Text(finding.doc, style="dim"))
    title = Text.assemble(
        (finding.code, "bold red"), " ", (finding.kind, "bold"), f" — {finding.title}"
    )
    return Panel(body, title=title, title_align="left", border_style="red")


def findings_view(findings: Sequence[Finding], *, ok_text: str = "no findings") -> RenderableType:
    """Every finding as a panel, or one green line when there are none."""
    if not findings:
        return Text(f"✓ {ok_text}", style="green")
    return Group(*(finding_panel(finding) for finding in findings))


def _short(path: str) -> str:
    """``path`` relative to the working directory when it lies below it (shorter panels);
    JSON and ``str()`` keep absolute paths."""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path
