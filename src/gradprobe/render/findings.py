"""Views of findings: rich panels for terminals, and the same rows as plain text for
``str()`` and logs. Consumes :class:`~gradprobe.findings.Finding` data only."""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Group
from rich.measure import Measurement
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult

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
    ranks = finding.details.get("ranks")
    if ranks:  # a distributed run's finding: the ranks it was found on
        rows.append(("ranks", ", ".join(map(str, ranks))))
    for location in finding.locations:
        where = location.where
        if short_paths and where.startswith(f"{location.file}:"):
            where = f"{_short(location.file)}:{location.line}"
        if location.function:
            where += f" in {location.function}"
        if location.text:
            where += f"\n  {location.text}"
        rows.append((location.role, where))
    if finding.hint:
        rows.append(("fix", finding.hint))
    rows.append(("docs", finding.read_more))
    return rows


def finding_panel(finding: Finding) -> RenderableType:
    """One finding as a panel: code and title, the message, what is involved, the fix.

    The title sits in the panel's top border when it fits the width; otherwise the border
    keeps the code (and kind, if they fit) and the title wraps as the panel's first line,
    so no title is cut mid-word.
    """
    return _FindingPanel(finding)


class _FindingPanel:
    def __init__(self, finding: Finding) -> None:
        self.finding = finding

    def _body(self) -> Table:
        body = Table.grid(padding=(0, 2))
        body.add_column(style="bold", no_wrap=True)
        body.add_column(overflow="fold")  # a path longer than the panel: folded, not cut
        for label, text in finding_rows(self.finding):
            style = "green" if label == "fix" else "dim" if label == "docs" else ""
            body.add_row(label, Text(text, style=style))
        return body

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        finding = self.finding
        code, kind = (finding.code, "bold red"), (finding.kind, "bold")
        full = Text.assemble(code, " ", kind, f" — {finding.title}")
        # the border around a title: "╭─ " before it, " ─╮" after it at the least
        room = options.max_width - 6
        body: RenderableType = self._body()
        if full.cell_len <= room:
            title = full
        else:
            title = Text.assemble(code, " ", kind)
            if title.cell_len > room:
                title = Text.assemble(code)
            body = Group(Text(finding.title, style="bold"), body)
        yield Panel(body, title=title, title_align="left", border_style="red")

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(options.max_width, options.max_width)


def findings_view(findings: Sequence[Finding], *, ok_text: str = "no findings") -> RenderableType:
    """Every finding as a panel, or one green line when there are none."""
    if not findings:
        return Text(f"✓ {ok_text}", style="green")
    return Group(*(finding_panel(finding) for finding in findings))


def findings_text(findings: Sequence[Finding], *, header: str, width: int | None = None) -> str:
    """``header``, then each finding as plain text: its code, kind and title on one line,
    then the rows of :func:`finding_rows` indented below it (absolute paths, no colour):
    what ``print(recording)`` shows and logs keep.

    Lines wrap at spaces to ``width`` (default: the terminal's, ``COLUMNS``, or 80 in a
    pipe); a word or path longer than a line is kept whole, never cut.

    Example:
        >>> from gradprobe.findings import Location, make_finding
        >>> here = Location("/src/train.py", 12, "cause", "main", "loss = out.sum()")
        >>> found = make_finding("GP104", message="The root has no grad_fn.",
        ...                      hint="Remove the detach().", locations=[here])
        >>> print(findings_text([found], header="1 finding", width=60))
        1 finding
        GP104 backward_without_grad_fn — backward on a tensor that
          does not require grad
          what   The root has no grad_fn.
          cause  /src/train.py:12 in main
                   loss = out.sum()
          fix    Remove the detach().
          docs   gradprobe explain GP104
    """
    if width is None:
        width = shutil.get_terminal_size((80, 24)).columns
    lines = [header]
    for finding in findings:
        lines.extend(_wrap(f"{finding.code} {finding.kind} — {finding.title}", width, "", "  "))
        rows = finding_rows(finding, short_paths=False)
        label_width = max(len(label) for label, _ in rows)
        for label, text in rows:
            indent = " " * (label_width + 4)
            first, *rest = text.split("\n")
            lines.extend(_wrap(first, width, f"  {label:<{label_width}}  ", indent))
            for more in rest:
                lines.extend(_wrap(more, width, indent, indent + "  "))
    return "\n".join(lines)


def _wrap(text: str, width: int, first: str, rest: str) -> list[str]:
    """``text`` wrapped at spaces, whole words only (a long path stays on its line)."""
    lead = len(text) - len(text.lstrip(" "))
    return textwrap.wrap(
        text.strip(" "),
        width=max(width, len(first) + lead + 10),
        initial_indent=first + " " * lead,
        subsequent_indent=rest,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [first.rstrip()]


def _short(path: str) -> str:
    """``path`` relative to the working directory when it lies below it (shorter panels);
    JSON and ``str()`` keep absolute paths."""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path
