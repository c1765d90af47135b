"""Leaf and ``.grad`` status of named tensors: the data behind :func:`leaf_report`.

For each tensor: ``is_leaf``, ``requires_grad``, ``retains_grad``, whether ``.grad`` is set,
and, when it is not, the reason that can be read off the tensor itself and the traced
graph (not a leaf, does not require grad, not reached from the traced output). The
recorder of :mod:`gradprobe` adds the lines that cut a graph; this module stays a plain
inspection.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from gradprobe.errors import GradprobeTypeError, describe
from gradprobe.graph import Graph, Leaf

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

__all__ = ["LeafReport", "LeafRow", "leaf_report"]

Source = Graph | torch.nn.Module | torch.Tensor | Mapping[str, torch.Tensor]


@dataclass(frozen=True)
class LeafRow:
    """One tensor's autograd status. ``note`` says why ``.grad`` is None, when it is."""

    name: str
    kind: str
    shape: tuple[int, ...]
    dtype: str
    is_leaf: bool
    requires_grad: bool
    retains_grad: bool
    has_grad: bool
    grad_fn: str | None
    in_graph: bool | None
    note: str | None


@dataclass(frozen=True)
class LeafReport:
    """Rows of :func:`leaf_report`; prints as a rich table, ``str()`` gives plain text."""

    rows: tuple[LeafRow, ...]
    graph_roots: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def missing_grad(self) -> tuple[LeafRow, ...]:
        """Rows whose tensor requires grad but has no ``.grad``."""
        return tuple(row for row in self.rows if row.requires_grad and not row.has_grad)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from gradprobe.render.text import leaf_table

        yield leaf_table(self)

    def __str__(self) -> str:
        from gradprobe.render.text import to_text

        return to_text(self)

    def _repr_html_(self) -> str:
        """The table as HTML, for notebooks."""
        from gradprobe.render.html_report import to_html
        from gradprobe.render.text import leaf_table

        return to_html(leaf_table(self))

    def __repr__(self) -> str:
        return f"<LeafReport {len(self.rows)} tensors, {len(self.missing_grad)} without .grad>"


def leaf_report(*sources: Source, names: Mapping[str, torch.Tensor] | None = None) -> LeafReport:
    """Leaf, ``requires_grad``, ``retains_grad`` and ``.grad`` status of named tensors.

    Args:
        sources: any mix of a traced :class:`Graph` (its leaves, and which parameters it
            reaches), an ``nn.Module`` (its parameters and buffers, read live), tensors,
            and ``{name: tensor}`` mappings.
        names: more named tensors, as in :func:`gradprobe.trace`.

    Example:
        >>> import torch, gradprobe
        >>> layer = torch.nn.Linear(2, 1)
        >>> x = torch.ones(1, 2)
        >>> hidden = x * 2
        >>> report = gradprobe.leaf_report(layer, {"x": x, "hidden": hidden})
        >>> [(row.name, row.is_leaf, row.requires_grad) for row in report.rows]
        [('weight', True, True), ('bias', True, True), ('x', True, False), ('hidden', True, False)]
    """
    graphs = [source for source in sources if isinstance(source, Graph)]
    reached = {leaf.name for graph in graphs for leaf in graph.leaves if leaf.name}
    # A graph traced without model= has parameters among its unnamed leaves: a graph holds
    # no tensor, so they cannot be matched to the live tensors given here.
    unnamed = sum(
        1 for graph in graphs if graph.model is None for leaf in graph.leaves if leaf.name is None
    )
    rows: list[LeafRow] = []
    seen: set[int] = set()
    loose = 0

    def add(name: str, kind: str, tensor: torch.Tensor) -> None:
        if id(tensor) in seen:
            return
        seen.add(id(tensor))
        in_graph = (name in reached) if graphs else None
        if in_graph is False and unnamed:
            in_graph = None  # perhaps one of the unnamed leaves: unknown
        rows.append(_row(name, kind, tensor, in_graph, unmatched=bool(unnamed)))

    # Annotated as object: users pass anything, and every branch below is a real check.
    everything: tuple[object, ...] = (*sources, *([names] if names is not None else []))
    for source in everything:
        if isinstance(source, Graph):
            continue
        if isinstance(source, torch.nn.Module):
            for name, param in source.named_parameters():
                add(name, "parameter", param)
            for name, buffer in source.named_buffers():
                add(name, "buffer", buffer)
        elif isinstance(source, torch.Tensor):
            add(f"tensor[{loose}]", "tensor", source)
            loose += 1
        elif isinstance(source, Mapping):
            for name, value in source.items():
                tensor: object = value
                if not isinstance(tensor, torch.Tensor):
                    msg = (
                        f"leaf_report() got {describe(tensor)} for {name!r}; "
                        "a mapping passed to leaf_report() must map names to tensors."
                    )
                    raise GradprobeTypeError(msg)
                add(str(name), "input", tensor)
        else:
            msg = (
                f"leaf_report() cannot inspect {describe(source)}. Pass a traced Graph, "
                "an nn.Module, tensors, or a {name: tensor} mapping, e.g. "
                "leaf_report(model, {'x': x})."
            )
            raise GradprobeTypeError(msg)
    live = {row.name for row in rows}
    given_live = bool(rows)
    for graph in graphs:
        for leaf in graph.leaves:
            if leaf.name is None and given_live and graph.model is None:
                continue  # may be one of the rows above: said in a note instead
            if leaf.name is None or leaf.name not in live:
                rows.append(_traced_row(leaf))
                if leaf.name is not None:
                    live.add(leaf.name)
    notes: list[str] = []
    if unnamed and given_live:
        notes.append(
            f"the graph reaches {unnamed} unnamed leaf tensor{'' if unnamed == 1 else 's'} "
            "(it was traced without model= or names=), which cannot be matched to the "
            "tensors listed; trace(loss, model=model) tells which parameters it reaches"
        )
    roots = tuple(root.name for graph in graphs for root in graph.roots)
    return LeafReport(rows=tuple(rows), graph_roots=roots, notes=tuple(notes))


def _why_no_grad(tensor: torch.Tensor, in_graph: bool | None, unmatched: bool) -> str:
    if not tensor.requires_grad:
        return "requires_grad=False"
    if not tensor.is_leaf and not tensor.retains_grad:
        return "not a leaf: call .retain_grad() before backward()"
    if in_graph is False:
        return "not in the traced graph: unused, or cut by detach()/.data/no_grad()"
    if in_graph is None and unmatched:
        return "no backward() has reached it yet (whether the traced graph does: see the note)"
    return "no backward() has reached it yet"


def _row(
    name: str, kind: str, tensor: torch.Tensor, in_graph: bool | None, *, unmatched: bool = False
) -> LeafRow:
    # Reading .grad of a non-leaf that does not retain it warns; its value is None anyway.
    readable = tensor.is_leaf or tensor.retains_grad
    has_grad = readable and tensor.grad is not None
    grad_fn = tensor.grad_fn
    return LeafRow(
        name=name,
        kind=kind,
        shape=tuple(tensor.shape),
        dtype=str(tensor.dtype).removeprefix("torch."),
        is_leaf=bool(tensor.is_leaf),
        requires_grad=bool(tensor.requires_grad),
        retains_grad=bool(tensor.retains_grad),
        has_grad=has_grad,
        grad_fn=grad_fn.name() if grad_fn is not None else None,
        in_graph=in_graph,
        note=None if has_grad else _why_no_grad(tensor, in_graph, unmatched),
    )


def _traced_row(leaf: Leaf) -> LeafRow:
    return LeafRow(
        name=leaf.name or "(unnamed leaf)",
        kind=leaf.kind,
        shape=leaf.shape,
        dtype=leaf.dtype,
        is_leaf=leaf.is_leaf,
        requires_grad=leaf.requires_grad,
        retains_grad=leaf.retains_grad,
        has_grad=leaf.has_grad,
        grad_fn=None,
        in_graph=True,
        note=None if leaf.has_grad else "no backward() had reached it when traced",
    )
