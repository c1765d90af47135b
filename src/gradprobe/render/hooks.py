"""Terminal views (rich) of the hook inspector's data: inventories, timelines, layouts.

Consumes :mod:`gradprobe.hooks` data only; never touches modules, tensors or autograd.
File paths are shown as file names (the full paths stay in ``to_dict()``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from gradprobe.findings import source_line
from gradprobe.hooks._names import display_path
from gradprobe.render._fit import Column, FittedTable
from gradprobe.render.findings import findings_view

if TYPE_CHECKING:
    from rich.console import RenderableType

    from gradprobe.hooks._explain import GradSlot, HookLayout
    from gradprobe.hooks._inventory import HookInventory
    from gradprobe.hooks._timeline import HookTimeline

__all__ = ["comparison_table", "inventory_view", "layout_view", "timeline_view"]


def _where(file: str | None, line: int | None) -> Text:
    if file is None:
        return Text("–", style="dim")
    return Text(source_line(display_path(file), line) if line else display_path(file))


def inventory_view(inventory: HookInventory) -> RenderableType:
    """One row per hook: owner, kind, callable, where it is defined, flags."""
    if not inventory.entries:
        return Text(f"no hooks on {inventory.subject}", style="green")
    rows = [
        [
            Text(entry.owner),
            Text(entry.kind, style="yellow" if entry.kind.endswith("legacy") else ""),
            Text(entry.hook),
            _where(entry.file, entry.line),
            Text(", ".join(entry.flags), style="dim"),
        ]
        for entry in inventory.entries
    ]
    columns = [
        Column("on", wrap=True),
        Column("kind"),
        Column("hook", wrap=True),
        Column("defined at"),
        Column("flags", wrap=True),
    ]
    table = FittedTable(
        f"hooks on {inventory.subject} ({len(inventory.entries)})", columns, rows, keys=2
    )
    findings = inventory.findings()
    if not findings:
        return table
    return Group(table, findings_view(findings))


def timeline_view(timeline: HookTimeline) -> RenderableType:
    """One row per hook call, in firing order (the running node is in ``to_dict()``)."""
    if not timeline.events:
        return Text("no hook fired", style="yellow")
    rows: list[list[str | Text]] = [
        [
            str(event.index),
            Text(event.phase, style="cyan" if event.phase == "forward" else "magenta"),
            event.kind,
            Text(event.target),
            Text(event.hook),
        ]
        for event in timeline.events
    ]
    columns = [
        Column("#", justify="right"),
        Column("phase"),
        Column("kind"),
        Column("on", wrap=True),
        Column("hook", wrap=True),
    ]
    table = FittedTable(f"hook timeline ({len(timeline.events)} calls)", columns, rows, keys=3)
    if not timeline.notes:
        return table
    return Group(table, *(Text(f"note: {note}", style="yellow") for note in timeline.notes))


def _slots_table(title: str, slots: Sequence[GradSlot]) -> RenderableType:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("shape", no_wrap=True)
    table.add_column("is", overflow="fold")
    for slot in slots:
        shape = "None" if slot.shape is None else _shape(slot.shape)
        label = Text(slot.label, style="red" if slot.role in ("intermediate", "unknown") else "")
        if slot.note:
            label.append(f" ({slot.note})", style="yellow")
        table.add_row(str(slot.index), shape, label)
    return Group(Text(title, style="bold"), table)


def _shape(shape: tuple[int, ...]) -> str:
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(str(size) for size in shape) + ")"


def layout_view(layout: HookLayout) -> RenderableType:
    """What the legacy and the full backward hook receive, side by side in two tables."""
    inputs = ", ".join("–" if s is None else _shape(s) for s in layout.input_shapes)
    head = Text.assemble(
        ("backward hooks on ", "bold"), (layout.module, "bold"), f", input {inputs}"
    )
    parts: list[RenderableType] = [head]
    if layout.legacy_fired:
        where = f"attached to {layout.node}" if layout.node else "attached to no node"
        title = f"register_backward_hook (legacy) grad_input, {where}"
        parts.append(_slots_table(title, layout.legacy_grad_input))
        if not layout.legacy_complete:
            parts.append(
                Text(
                    "  the legacy hook sees the last operation only, not the module's inputs\n",
                    style="red",
                )
            )
    elif layout.legacy_error:
        parts.append(Text(f"legacy hook: the forward failed: {layout.legacy_error}", style="red"))
    else:
        parts.append(Text("legacy hook: never called", style="red"))
    if layout.full_fired:
        parts.append(_slots_table("register_full_backward_hook grad_input", layout.full_grad_input))
    elif layout.full_error:
        parts.append(Text(f"full hook: the forward fails: {layout.full_error}", style="red"))
    else:
        parts.append(Text("full hook: never called", style="red"))
    if layout.findings:
        parts.append(findings_view(layout.findings))
    return Group(*parts)


def comparison_table(layouts: Sequence[HookLayout]) -> RenderableType:
    """One row per explained module: what each kind of hook gets as ``grad_input``."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, title_justify="left")
    table.add_column("module", overflow="fold")
    table.add_column("input", overflow="fold")
    table.add_column("last node", overflow="fold")
    table.add_column("legacy grad_input", overflow="fold")
    table.add_column("full grad_input", overflow="fold")
    for layout in layouts:
        inputs = ", ".join("–" if s is None else _shape(s) for s in layout.input_shapes)
        legacy = (
            "\n".join(str(slot) for slot in layout.legacy_grad_input)
            if layout.legacy_fired
            else "never called"
        )
        full = (
            "\n".join(str(slot) for slot in layout.full_grad_input)
            if layout.full_fired
            else ("forward fails" if layout.full_error else "never called")
        )
        # Text, not str: rich would read a module named "[/]" as markup
        table.add_row(
            *(Text(cell) for cell in (layout.module, inputs, layout.node or "–")),
            Text(legacy),
            Text(full),
        )
    return table
