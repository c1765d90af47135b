"""Pictures of findings: the slice of the graph around a problem, the culprit highlighted.

Draws a :class:`~gradprobe.findings.Finding`'s
:class:`~gradprobe.graph.GraphSlice` (plain data the recording captured) with the nodes of
:mod:`gradprobe.render.dot`, plus what the finding knows: the stale saved tensor with its
versions and the line that wrote over it, the node that made the first NaN/Inf, the cut
(a dashed edge labelled with the cutting op and line), parameters without gradient
(greyed, with the reason), the finding's code, title and cause line as a caption, and a
legend of what is drawn. Every highlighted node, edge and box carries the class
``gp-problem`` in the SVG: a stable hook for CSS and tests. Consumes data only.

Example:
    >>> from gradprobe.findings import make_finding
    >>> dot = finding_dot(make_finding("GP103", node="MulBackward0"))
    >>> dot.splitlines()[0], 'class="gp-problem"' in dot
    ('digraph gradprobe_finding {', True)
"""

from __future__ import annotations

import os
import re
import textwrap
from collections.abc import Sequence
from pathlib import Path

from gradprobe._layout import build_view, node_key
from gradprobe.errors import GradprobeTypeError, GraphvizNotFoundError, describe
from gradprobe.findings import Finding
from gradprobe.graph import Graph, GraphSlice, Mark
from gradprobe.render.dot import (
    _FILL,
    _FONT,
    _GREY,
    _RED,
    _attrs,
    _font,
    _label,
    _Writer,
    html_text,
)
from gradprobe.render.svg import _check_path, _run, find_engine

__all__ = [
    "finding_dot",
    "finding_svg",
    "findings_svg",
    "save_finding_svg",
    "save_findings_svg",
    "write_pictures",
]

PROBLEM = "gp-problem"
"""The SVG class of every highlighted element."""

_ORANGE = "#e65100"
_COLORS = {"stale": _RED, "nonfinite": _ORANGE, "cut": _RED, "problem": _RED}
_FILLS = {"stale": "#ffebee", "nonfinite": "#fff3e0", "cut": "#ffebee", "problem": "#ffebee"}
_MISSING_FILL = "#eeeeee"
_WRAP = 56
_LEGEND = {
    "stale": "saved tensor modified in place after it was saved",
    "nonfinite": "where NaN/Inf first appeared",
    "cut": "where the graph was cut (dashed)",
    "problem": "what the finding is about",
    "missing": "parameter that got no gradient",
}


def _lines(text: str, *, size: int = 8, color: str | None = None, width: int = _WRAP) -> list[str]:
    return [
        _font(html_text(line, 4 * width), size=size, color=color)
        for line in textwrap.wrap(text, width) or [""]
    ]


class _PictureWriter(_Writer):
    def __init__(self, graph: Graph, marks: Sequence[Mark]) -> None:
        super().__init__(graph, build_view(graph, "full"), "TB", True)
        self.marks: dict[int, list[Mark]] = {}
        for mark in marks:
            self.marks.setdefault(mark.node, []).append(mark)

    def decorate(self, node_id: int, lines: list[str], attrs: dict[str, str]) -> None:
        marks = self.marks.get(node_id)
        if not marks:
            return
        kind = marks[0].kind
        for mark in marks:
            lines.extend(_lines(mark.text, color=_COLORS[mark.kind]))
        attrs.update(
            color=_COLORS[kind], penwidth="2.5", fillcolor=_FILLS[kind], **{"class": PROBLEM}
        )


def finding_dot(finding: Finding) -> str:
    """The DOT text of :meth:`Finding.to_svg`'s picture (deterministic, like ``to_dot``)."""
    given: object = finding
    if not isinstance(given, Finding):
        msg = (
            f"finding_dot() draws a gradprobe Finding, got {describe(finding)}; findings "
            "come from gradprobe.record() (rec.findings) or gradprobe.check()."
        )
        raise GradprobeTypeError(msg)
    part = finding.graph_slice or GraphSlice(Graph(nodes=(), edges=(), roots=()))
    writer = _PictureWriter(part.graph, part.marks)
    body = writer.write().rstrip().removesuffix("}").rstrip("\n").splitlines()
    header, rest = ["digraph gradprobe_finding {", *body[1:4]], body[4:]
    out = [*header, f'  graph [labelloc="t", label={_label(_caption(finding))}]', *rest]
    kinds: set[str] = {mark.kind for mark in part.marks}
    if not len(part.graph) and not part.cuts and not part.missing:
        out.append(f"  what {_what(finding)}")
        kinds.add("problem")
    for index, cut in enumerate(part.cuts):
        key = f"cut{index}"
        label = [f"<B>{html_text(cut.op)}()</B>", *_lines(f"cut the graph at {cut.where}")]
        out.append(
            f"  {key} "
            + _attrs(
                label=_label(label),
                style="rounded,filled,dashed",
                color=_RED,
                penwidth="2",
                fillcolor=_FILLS["cut"],
                **{"class": PROBLEM},
            )
        )
        if cut.source is not None:
            out.append(f'  {node_key(cut.source)} -> {key} [style="dashed", color="{_GREY}"]')
        if cut.node is not None:
            edge = _attrs(
                label=_label([_font(html_text(f"no gradient: {cut.op}()"), size=8, color=_RED)]),
                style="dashed",
                color=_RED,
                penwidth="1.5",
                fontname=_FONT,
                fontcolor=_RED,
                **{"class": PROBLEM},
            )
            out.append(f"  {key} -> {node_key(cut.node)} {edge}")
        kinds.add("cut")
    for index, leaf in enumerate(part.missing):
        key = f"missing{index}"
        label = [
            f"<B>{html_text(leaf.name)}</B>",
            _font("no gradient", size=8, color=_RED),
            *(_lines(leaf.reason, color=_GREY) if index == 0 else []),
        ]
        out.append(
            f"  {key} "
            + _attrs(
                label=_label(label),
                style="rounded,filled,dashed",
                color=_GREY,
                fontcolor=_GREY,
                fillcolor=_MISSING_FILL,
                **{"class": PROBLEM},
            )
        )
        if leaf.cut is not None and leaf.cut < len(part.cuts):
            out.append(f'  {key} -> cut{leaf.cut} [style="dashed", color="{_GREY}"]')
        kinds.add("missing")
    out.append(f"  legend {_legend(kinds)}")
    out.append("}")
    return "\n".join(out) + "\n"


def _caption(finding: Finding) -> list[str]:
    lines = [f"<B>{html_text(f'{finding.code} {finding.kind}')}</B>", html_text(finding.title)]
    cause = finding.cause
    if cause is not None:
        where = f"{Path(cause.file).name}:{cause.line}"
        lines.extend(_lines(f"cause: {where}", size=9, color=_RED))
        if cause.text:
            lines.extend(_lines(cause.text, size=9, color=_RED, width=72))
    return lines


def _what(finding: Finding) -> str:
    """The one box of a picture whose finding could not be placed in any graph."""
    lines = []
    for label, value in (
        ("node", finding.node),
        ("tensor", finding.tensor),
        ("module", finding.module),
        ("parameter", finding.parameter),
    ):
        if value:
            lines.append(f"<B>{html_text(f'{label}: {value}')}</B>")
    lines.extend(_lines(finding.message[:300], color=_GREY))
    return _attrs(
        label=_label(lines),
        color=_RED,
        penwidth="2.5",
        fillcolor=_FILLS["problem"],
        **{"class": PROBLEM},
    )


def _legend(kinds: set[str]) -> str:
    lines = ["<B>legend</B>"]
    for kind in ("stale", "nonfinite", "cut", "problem", "missing"):
        if kind in kinds:
            color = _GREY if kind == "missing" else _COLORS[kind]
            lines.append(_font(f"■ {_LEGEND[kind]}", size=8, color=color))
    return _attrs(label=_label(lines), shape="note", fillcolor=_FILL["note"])


# -- SVG -------------------------------------------------------------------------------------


def finding_svg(finding: Finding, *, timeout: float = 60.0) -> str:
    """:func:`finding_dot` laid out as SVG by the engine :func:`find_engine` picks."""
    dot = finding_dot(finding)
    part = finding.graph_slice
    return _run(find_engine(), dot, timeout, len(part.graph) if part else 0)


def save_finding_svg(finding: Finding, path: str | os.PathLike[str]) -> Path:
    """Write :func:`finding_svg` to ``path`` and return it."""
    target = _check_path(path)
    target.write_text(finding_svg(finding), encoding="utf-8")
    return target


def write_pictures(findings: Sequence[Finding], directory: Path, *, prefix: str = "") -> list[Path]:
    """Each finding's picture as ``directory/<prefix><code>-<n>.svg`` (``n`` counts the
    findings of that code from 0); DOT files instead when there is no Graphviz engine."""
    directory.mkdir(parents=True, exist_ok=True)
    counts: dict[str, int] = {}
    written = []
    for finding in findings:
        index = counts[finding.code] = counts.get(finding.code, -1) + 1
        path = directory / f"{prefix}{finding.code}-{index}.svg"
        try:
            save_finding_svg(finding, path)
        except GraphvizNotFoundError:
            path = path.with_suffix(".dot")
            path.write_text(finding_dot(finding), encoding="utf-8")
        written.append(path)
    return written


_SIZE = re.compile(r'<svg\b[^>]*?width="([\d.]+)pt" height="([\d.]+)pt"')
_GAP = 16.0


def findings_svg(findings: Sequence[Finding], *, timeout: float = 60.0) -> str:
    """Every finding's picture stacked in one SVG document (nested ``<svg>`` elements)."""
    if not findings:
        pictures = [_run(find_engine(), _NOTHING, timeout, 0)]
    else:
        pictures = [finding_svg(finding, timeout=timeout) for finding in findings]
    parts: list[str] = []
    width = height = 0.0
    for picture in pictures:
        body = picture[picture.index("<svg") :]
        size = _SIZE.search(body)
        w, h = (float(size.group(1)), float(size.group(2))) if size else (0.0, 0.0)
        parts.append(body.replace("<svg ", f'<svg x="0" y="{height:g}" ', 1))
        width = max(width, w)
        height += h + _GAP
    height = max(height - _GAP, 0.0)
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n'
        f'<svg width="{width:g}pt" height="{height:g}pt" viewBox="0 0 {width:g} {height:g}" '
        'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">\n'
        + "\n".join(parts)
        + "</svg>\n"
    )


def save_findings_svg(findings: Sequence[Finding], path: str | os.PathLike[str]) -> Path:
    """Write :func:`findings_svg` to ``path`` and return it."""
    target = _check_path(path)
    target.write_text(findings_svg(findings), encoding="utf-8")
    return target


_NOTHING = (
    "digraph gradprobe_finding {\n"
    f'  node [shape="box", style="rounded,filled", fontname="{_FONT}", fontsize="10"]\n'
    '  ok [label="gradprobe: nothing to report", fillcolor="#e8f5e9"]\n'
    "}\n"
)
