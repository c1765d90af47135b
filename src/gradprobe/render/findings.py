"""Views of findings: rich panels for terminals, and the same rows as plain text for
``str()`` and logs. Consumes :class:`~gradprobe.findings.Finding` data only."""

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

__all__ = ["finding_panel", "finding_rows", "findings_text", "findings_view"]


def finding_rows(finding: Finding, *, short_paths: bool = True) -> list[tuple[str, str]]:
    """``(label, text)`` pairs shown for ``finding``: the message, what is involved, each
    location (its source line on a second line), the fix and the docs page."""
    rows = [("what", finding.message)]
    for label, value in (
        ("tensor", finding.tensor),
        ("node", finding.node),
        ("module", finding.module),
        ("parameter", finding.parameter),
    ):
        if value:
            rows.append((label, value))
    for location in finding.locations:
        where = f"{_short(location.file) if short_paths else location.file}:{location.line}"
        if location.function:
            where += f" in {location.function}"
        if location.text:
            where += f"\n  {location.text}"
        rows.append((location.role, where))
    if finding.hint:
        rows.append(("fix", finding.hint))
    rows.append(("docs", finding.doc))
    return rows


def finding_panel(finding: Finding) -> RenderableType:
    """One finding as a panel: code and title, the message, what is involved, the fix."""
    body = Table.grid(padding=(0, 2))
    body.add_column(style="bold")
    body.add_column()
    for label, text in finding_rows(finding):
        style = "green" if label == "fix" else "dim" if label == "docs" else ""
        body.add_row(label, Text(text, style=style))
    title = Text.assemble(
        (finding.code, "bold red"), " ", (finding.kind, "bold"), f" — {finding.title}"
    )
    return Panel(body, title=title, title_align="left", border_style="red")


def findings_view(findings: Sequence[Finding], *, ok_text: str = "no findings") -> RenderableType:
    """Every finding as a panel, or one green line when there are none."""
    if not findings:
        return Text(f"✓ {ok_text}", style="green")
    return Group(*(finding_panel(finding) for finding in findings))


def findings_text(findings: Sequence[Finding], *, header: str) -> str:
    """``header``, then each finding as plain text: its code, kind and title on one line,
    then the rows of :func:`finding_rows` indented below it (absolute paths, no colour, no
    wrapping: what ``print(recording)`` shows and logs keep).

    Example:
        >>> from gradprobe.findings import Location, make_finding
        >>> here = Location("/src/train.py", 12, "cause", "main", "loss = out.sum()")
        >>> found = make_finding("GP104", message="The root has no grad_fn.",
        ...                      locations=[here])
        >>> print(findings_text([found], header="1 finding"))  # doctest: +ELLIPSIS
        1 finding
        GP104 backward_without_grad_fn — backward on a tensor that does not require grad
          what   The root has no grad_fn.
          cause  /src/train.py:12 in main
                   loss = out.sum()
          fix    ...
          docs   docs/findings/gp104.md
    """
    lines = [header]
    for finding in findings:
        lines.append(f"{finding.code} {finding.kind} — {finding.title}")
        rows = finding_rows(finding, short_paths=False)
        width = max(len(label) for label, _ in rows)
        for label, text in rows:
            first, *rest = text.split("\n")
            lines.append(f"  {label:<{width}}  {first}")
            lines.extend(f"  {'':<{width}}  {more}" for more in rest)
    return "\n".join(lines)


def _short(path: str) -> str:
    """``path`` relative to the working directory when it lies below it (shorter panels);
    JSON and ``str()`` keep absolute paths."""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path
