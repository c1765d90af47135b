"""HTML views of gradprobe's reports, for notebooks (the ``_repr_html_`` of each report).

No second report: the terminal views (:mod:`gradprobe.render.findings`, ``text``, ``hooks``,
``watch``) build rich renderables from the data, and this module writes those same
renderables as HTML. A finding becomes a table of its rows (what, the names involved, each
location with its source line, the fix, the docs page); a table becomes a ``<table>`` with
every row and column (a notebook scrolls sideways, so nothing is stacked or cut); a line of
text keeps its colours. Anything else is written as rich's own HTML export.

Every string that reaches the page is escaped: module, parameter and tensor names come from
user code, and ``<b>`` or ``[bold red]`` in a name is shown as written.

Example:
    >>> from rich.text import Text
    >>> from gradprobe.render.html_report import to_html
    >>> "&lt;script&gt;" in to_html(Text("<script>"))
    True
"""

from __future__ import annotations

import html
import io
from typing import TYPE_CHECKING

from rich.color import Color
from rich.console import Console, Group
from rich.style import Style
from rich.table import Table
from rich.terminal_theme import TerminalTheme
from rich.text import Text

from gradprobe.render._fit import FittedTable
from gradprobe.render.findings import _FindingPanel, finding_rows

if TYPE_CHECKING:
    from rich.console import RenderableType

    from gradprobe.findings import Finding

__all__ = ["finding_html", "to_html"]

# Colours readable on a light and on a dark notebook theme; rich's names map onto them.
_THEME = TerminalTheme(
    (255, 255, 255),
    (0, 0, 0),
    [
        (0, 0, 0),
        (207, 34, 46),  # red
        (26, 127, 55),  # green
        (154, 103, 0),  # yellow
        (9, 105, 218),  # blue
        (130, 80, 223),  # magenta
        (27, 124, 131),  # cyan
        (110, 119, 129),  # white (grey here)
    ],
)
_BOX = "font-family: var(--jp-code-font-family, monospace); font-size: 0.9em; line-height: 1.35"
_CELL = "padding: 1px 10px 1px 0; vertical-align: top; border: none; background: none"
_LINE = "white-space: pre-wrap; margin: 0"


def to_html(renderable: RenderableType, *, header: str | None = None) -> str:
    """``renderable`` (a view built by gradprobe's terminal renderers) as one HTML block,
    with ``header`` as its first line in bold."""
    parts = [f'<div class="gradprobe" style="{_BOX}">']
    if header is not None:
        parts.append(f'<div style="{_LINE}; font-weight: bold">{_escape(header)}</div>')
    parts.append(_html(renderable))
    parts.append("</div>")
    return "".join(parts)


def finding_html(finding: Finding) -> str:
    """One finding: its code, kind and title, then a table of its rows."""
    return to_html(_FindingPanel(finding))


def _html(renderable: RenderableType) -> str:
    if isinstance(renderable, _FindingPanel):
        return _finding(renderable.finding)
    if isinstance(renderable, FittedTable):
        return _table(renderable)
    if isinstance(renderable, Table):
        return _rich_table(renderable)
    if isinstance(renderable, Group):
        return "".join(_html(part) for part in renderable.renderables)
    if isinstance(renderable, str):
        renderable = Text(renderable)  # as text: never read as rich markup
    if isinstance(renderable, Text):
        return f'<div style="{_LINE}">{_spans(renderable)}</div>' if renderable.plain else ""
    return _exported(renderable)


def _finding(finding: Finding) -> str:
    red = _css(Style(color="red", bold=True))
    head = (
        f'<div style="{_LINE}"><span style="{red}">{_escape(finding.code)}</span> '
        f"<b>{_escape(finding.kind)}</b> — {_escape(finding.title)}</div>"
    )
    rows = []
    for label, text in finding_rows(finding):
        first, *rest = text.split("\n")
        cell = _escape(first)
        if rest:  # a location's source line
            source = "\n".join(line.strip() for line in rest)
            cell += f"<br><code>{_escape(source)}</code>"
        style = {"fix": "green", "docs": "dim"}.get(label, "")
        css = "; ".join(filter(None, (_CELL, "text-align: left", _css(Style.parse(style)))))
        rows.append(
            f'<tr><th style="{_CELL}; text-align: left; font-weight: bold">{_escape(label)}</th>'
            f'<td style="{css}">{cell}</td></tr>'
        )
    return (
        f'<div class="gp-finding" data-code="{_escape(finding.code)}" style="border-left: '
        f'3px solid {_color("red")}; padding: 2px 0 2px 8px; margin: 6px 0">{head}'
        f'<table style="border-collapse: collapse; margin: 2px 0">{"".join(rows)}</table></div>'
    )


def _table(table: FittedTable) -> str:
    parts = ['<table class="gp-table" style="border-collapse: collapse; margin: 6px 0">']
    if table.title:
        caption = "caption-side: top; text-align: left; font-style: italic; padding: 2px 0"
        parts.append(f'<caption style="{caption}">{_escape(table.title)}</caption>')
    parts.append("<thead><tr>")
    for column in table.columns:
        header = " ".join(column.header.split())  # two-line terminal headers: one line here
        parts.append(
            f'<th style="{_CELL}; text-align: {column.justify}; border-bottom: 1px solid '
            f'currentColor">{_escape(header)}</th>'
        )
    parts.append("</tr></thead><tbody>")
    for row, style in zip(table.rows, table.styles, strict=True):
        parts.append(f'<tr style="{_css(Style.parse(style))}">' if style else "<tr>")
        for column, cell in zip(table.columns, row, strict=True):
            wrap = "pre-wrap" if column.wrap else "pre"
            parts.append(
                f'<td style="{_CELL}; text-align: {column.justify}; white-space: {wrap}">'
                f"{_spans(cell)}</td>"
            )
        parts.append("</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


def _rich_table(table: Table) -> str:
    """A rich ``Table`` (grids of labels and values, the reasons under a leaf table): its
    title, header and cells; a cell that is not text is converted like anything else."""
    parts = ['<table style="border-collapse: collapse; margin: 2px 0">']
    if isinstance(table.title, (str, Text)) and str(table.title):
        title = table.title if isinstance(table.title, Text) else Text(table.title)
        caption = "caption-side: top; text-align: left; font-style: italic"
        parts.append(f'<caption style="{caption}">{_spans(title)}</caption>')
    columns = table.columns
    if table.show_header and any(str(column.header) for column in columns):
        parts.append("<thead><tr>")
        for column in columns:
            header = column.header if isinstance(column.header, Text) else Text(str(column.header))
            parts.append(
                f'<th style="{_CELL}; text-align: {_justify(column.justify)}; border-bottom: '
                f'1px solid currentColor">{_spans(header)}</th>'
            )
        parts.append("</tr></thead>")
    parts.append("<tbody>")
    for cells in zip(*(list(column.cells) for column in columns), strict=True):
        parts.append("<tr>")
        for column, cell in zip(columns, cells, strict=True):
            style = _css(Style.parse(column.style)) if isinstance(column.style, str) else ""
            css = "; ".join(filter(None, (_CELL, f"text-align: {_justify(column.justify)}", style)))
            body = _spans(Text(cell)) if isinstance(cell, str) else _inline(cell)
            parts.append(f'<td style="{css}; white-space: pre-wrap">{body}</td>')
        parts.append("</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


def _inline(renderable: RenderableType) -> str:
    """A table cell's content: text as spans, anything else as its own block."""
    return _spans(renderable) if isinstance(renderable, Text) else _html(renderable)


def _justify(justify: str | None) -> str:
    return justify if justify in ("left", "right", "center") else "left"


_console = Console(file=io.StringIO(), color_system="truecolor", width=10_000, force_jupyter=False)


def _spans(text: Text) -> str:
    """``text`` with its styles as inline CSS, escaped."""
    out = []
    for segment in text.render(_console, end=""):
        escaped = _escape(segment.text)
        css = _css(segment.style) if segment.style else ""
        out.append(f'<span style="{css}">{escaped}</span>' if css else escaped)
    return "".join(out)


def _css(style: Style) -> str:
    parts = []
    if style.color is not None and not style.color.is_default:
        parts.append(f"color: {style.color.get_truecolor(_THEME).hex}")
    if style.bold:
        parts.append("font-weight: bold")
    if style.italic:
        parts.append("font-style: italic")
    if style.dim:
        parts.append("opacity: 0.7")
    if style.underline:
        parts.append("text-decoration: underline")
    return "; ".join(parts)


def _color(name: str) -> str:
    return Color.parse(name).get_truecolor(_THEME).hex


def _exported(renderable: RenderableType) -> str:
    """A renderable this module has no HTML of its own for: rich's HTML export (escaped,
    inline styles), in a ``<pre>``."""
    console = Console(
        file=io.StringIO(), record=True, color_system="truecolor", width=100, force_jupyter=False
    )
    console.print(renderable)
    return console.export_html(
        theme=_THEME,
        inline_styles=True,
        code_format=f'<pre style="{_LINE}; font-family: inherit">{{code}}</pre>',
    )


def _escape(text: str) -> str:
    return html.escape(text, quote=True)
