"""Tables that fit the terminal without cutting a number or a word.

rich squeezes a table wider than the terminal by cutting cells (``1.32e+…``) or dropping
columns. :class:`FittedTable` decides when it is printed, knowing the width: the table as
is when it fits; its text columns wrapped at spaces when that is enough; otherwise a stacked
layout, each row as its key columns on one line and ``column value`` pairs below.

Example:
    >>> from gradprobe.render._fit import Column, FittedTable
    >>> from gradprobe.render.text import to_text
    >>> table = FittedTable(
    ...     "gradients",
    ...     [Column("parameter"), Column("grad norm", justify="right")],
    ...     [["encoder.layers.0.self_attn.in_proj_weight", "1.32e+05"]],
    ... )
    >>> print(to_text(table, width=80), end="")
    gradients
    parameter                                  grad norm
    ────────────────────────────────────────────────────
    encoder.layers.0.self_attn.in_proj_weight   1.32e+05
    >>> print(to_text(table, width=44), end="")
    gradients
    encoder.layers.0.self_attn.in_proj_weight
      grad norm 1.32e+05
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from rich import box
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

__all__ = ["Column", "FittedTable"]

# Between two columns: one space of padding and the (blank) divider of SIMPLE_HEAD; no
# edges and no padding at them.
_GAP = 2
_INDENT = 2
_PAIR_GAP = 3


@dataclass(frozen=True)
class Column:
    """A column: its header (``\\n`` for two lines), alignment, and whether its cells may
    wrap at spaces (names with spaces, notes) or must stay whole (numbers, shapes)."""

    header: str
    justify: Literal["left", "right"] = "left"
    wrap: bool = False


class FittedTable:
    """A table that fits ``options.max_width`` without cutting a cell (see the module).

    ``keys`` is how many leading columns name the row; the stacked layout puts them on the
    row's first line. ``styles`` gives each row a rich style (``""`` for none).
    """

    def __init__(
        self,
        title: str | None,
        columns: Sequence[Column],
        rows: Sequence[Sequence[str | Text]],
        *,
        keys: int = 1,
        styles: Sequence[str] = (),
    ) -> None:
        self.title = title
        self.columns = tuple(columns)
        self.rows = [[_text(cell) for cell in row] for row in rows]
        self.keys = keys
        self.styles = tuple(styles) or ("",) * len(self.rows)

    def _natural(self) -> list[int]:
        """Each column's width with nothing wrapped."""
        return [
            max(_widest(Text(column.header)), *(_widest(row[i]) for row in self.rows))
            for i, column in enumerate(self.columns)
        ]

    def _least(self) -> list[int]:
        """Each column's narrowest width that cuts nothing."""
        return [
            max(
                _widest(Text(column.header), words=True),
                *(_widest(row[i], words=column.wrap) for row in self.rows),
            )
            for i, column in enumerate(self.columns)
        ]

    def widths(self, width: int) -> list[int] | None:
        """Column widths that fit ``width`` without cutting a cell, or None: stack."""
        natural, least = self._natural(), self._least()
        gaps = _GAP * (len(self.columns) - 1)
        if sum(natural) + gaps <= width:
            return natural
        spare = width - gaps - sum(least)
        if spare < 0:
            return None
        widths = list(least)
        # what is left goes to the wrapping columns that lack most
        while spare > 0:
            lacking = [i for i in range(len(widths)) if widths[i] < natural[i]]
            if not lacking:
                break
            most = max(lacking, key=lambda i: natural[i] - widths[i])
            widths[most] += 1
            spare -= 1
        return widths

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        widths = self.widths(options.max_width)
        if widths is None:
            yield from self._stacked(options.max_width)
            return
        table = Table(
            title=self.title,
            title_justify="left",
            box=box.SIMPLE_HEAD,
            show_edge=False,
            pad_edge=False,
            collapse_padding=True,
        )
        for column, size in zip(self.columns, widths, strict=True):
            table.add_column(
                column.header,
                justify=column.justify,
                width=size,
                no_wrap=not column.wrap,
                overflow="fold",
            )
        for row, style in zip(self.rows, self.styles, strict=True):
            table.add_row(*row, style=style)
        yield table

    def _stacked(self, width: int) -> RenderResult:
        if self.title:
            yield Text(self.title, style="italic")
        for row, style in zip(self.rows, self.styles, strict=True):
            head = Text(" ").join(cell for cell in row[: self.keys] if cell.plain)
            head.stylize(style)
            yield head
            pairs = []
            for column, cell in zip(self.columns[self.keys :], row[self.keys :], strict=True):
                if not cell.plain:
                    continue
                pair = Text(" ".join(column.header.split()) + " ", style="dim")
                pair.append_text(cell)
                pair.stylize(style)
                pairs.append(pair)
            yield from _pack(pairs, width)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        gaps = _GAP * (len(self.columns) - 1)
        least = min(sum(self._least()) + gaps, options.max_width)
        return Measurement(least, max(least, sum(self._natural()) + gaps))


def _text(cell: str | Text) -> Text:
    return cell if isinstance(cell, Text) else Text(cell)


def _widest(text: Text, *, words: bool = False) -> int:
    """The widest line of ``text``, or its widest word."""
    parts = text.plain.split() if words else text.plain.split("\n")
    return max((Text(part).cell_len for part in parts), default=0)


def _pack(pairs: Sequence[Text], width: int) -> RenderResult:
    """``pairs`` on indented lines, as many per line as fit; a pair is never split unless
    it alone is wider than a line."""
    line = Text(" " * _INDENT)
    filled = False
    for pair in pairs:
        if filled and line.cell_len + _PAIR_GAP + pair.cell_len > width:
            yield line
            line, filled = Text(" " * _INDENT), False
        if filled:
            line.append(" " * _PAIR_GAP)
        line.append_text(pair)
        filled = True
    if filled:
        yield line
