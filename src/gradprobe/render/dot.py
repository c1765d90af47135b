"""A :class:`~gradprobe.graph.Graph` as Graphviz DOT text, in pure Python.

The text depends only on the graph's data: ids come from ``node.id`` (``n12``) and from
the order of clusters and boxes, never from ``id()``, so the same program gives
byte-identical DOT every run (golden files and diffs work).

Every label is an HTML-like label built by :func:`html_text`, which escapes everything a
name could smuggle in: markup (``<script>``), quotes, entities, Graphviz's own backslash
escapes (``\\N`` expands to the node id, ``\\G`` to the graph name) and control characters
that XML, and so SVG, cannot hold.

Edges are drawn in forward (data-flow) direction: from an input or parameter to the op
that reads it, down to the outputs at the bottom. The graph keeps autograd's direction.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence
from typing import Literal

from gradprobe._layout import Box, Cluster, Detail, View, build_view, node_key
from gradprobe.errors import GradprobeTypeError, GradprobeValueError, describe
from gradprobe.graph import Graph, Leaf, Node, Root, SavedTensor, malformed

__all__ = [
    "MAX_BOXES",
    "RankDir",
    "check_arguments",
    "drawn_boxes",
    "full_boxes",
    "html_text",
    "plan_view",
    "to_dot",
]

RankDir = Literal["TB", "LR", "BT", "RL"]

MAX_BOXES = 2000
"""The most boxes :func:`gradprobe.render.to_svg` lays out by default. Graphviz's time
grows faster than the number of boxes (the system ``dot`` needs minutes for tens of
thousands); above it ``detail="auto"`` leaves out the boxes farthest from the outputs,
and an explicit ``detail``/``depth`` stops at once with what to do instead."""

_DETAILS = ("auto", "full", "collapsed")
_RANKDIRS = ("TB", "LR", "BT", "RL")
_MAX_TEXT = 80
_MAX_SAVED = 6
_MAX_METADATA = 3
_MAX_VIA = 4

# Boxes are sized for the font named here. DejaVu Sans is the widest sans-serif a viewer
# commonly falls back to (about 10% wider than Helvetica/Arial/Liberation Sans, 20% in
# bold), and graphviz-pure carries its metrics: sized for it, a label fits in any of them.
# to_svg() then lists Helvetica and Arial after it, for viewers without DejaVu.
_FONT = "DejaVu Sans"
_GREY = "#666666"
_RED = "#c62828"
_FILL = {
    "op": "#f2f2f2",
    "custom_function": "#ede7f6",
    "checkpoint": "#fff3e0",
    "compiled": "#fff3e0",
    "parameter": "#e3f2fd",
    "buffer": "#e3f2fd",
    "input": "#e8f5e9",
    "tensor": "#e8f5e9",
    "root": "#fff9c4",
    "box": "#eceff1",
    "note": "#fffde7",
}
_CLUSTER_FILLS = ("#fafafa", "#f3f6fa", "#f7f3fa", "#f3faf5")

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}


def to_dot(
    graph: Graph,
    *,
    detail: Detail = "auto",
    depth: int | None = None,
    rankdir: RankDir = "TB",
    show_saved: bool = True,
    max_boxes: int = MAX_BOXES,
) -> str:
    """The graph as DOT text, ready for ``dot -Tsvg`` (or :func:`gradprobe.render.to_svg`).

    Args:
        graph: what :func:`gradprobe.trace` returned.
        detail: ``"full"`` draws every node. ``"collapsed"`` folds view/reshape/
            transpose/expand ops into the op that reads them, draws one block of each
            structure in full and the blocks like it as boxes (``layer2.1 … layer2.3:
            3 × Bottleneck``), draws repeating op chains once, then boxes whole modules
            until at most 300 boxes are left. ``"auto"`` (default) takes those steps
            one at a time and stops at the first picture of at most 100 boxes, so
            small graphs are drawn in full.
        depth: draw every module this many levels down as one box with its parameter
            count (``1``: one box per top-level module); None: no limit. Needs
            parameter names (``trace(..., model=model)``).
        rankdir: Graphviz layout direction: ``"TB"`` puts inputs at the top, outputs at
            the bottom; ``"LR"`` left to right.
        show_saved: list each node's saved tensors (shape, dtype, version) in its label.
        max_boxes: ``detail="auto"`` only: above this many boxes, the boxes farthest
            from the outputs are drawn as one "more nodes" box.

    Returns:
        DOT source text; the same graph always gives the same bytes.

    Raises:
        GradprobeTypeError: ``graph`` is not a :class:`~gradprobe.graph.Graph`.
        GradprobeValueError: an unknown ``detail`` or ``rankdir``, a ``depth`` or
            ``max_boxes`` that is not a positive int.

    Example:
        >>> import torch, gradprobe
        >>> w = torch.ones(3, requires_grad=True)
        >>> text = to_dot(gradprobe.trace((w * 2).sum(), names={"w": w}))
        >>> text.splitlines()[0]
        'digraph gradprobe {'
        >>> "n2 -> n1" in text  # w's AccumulateGrad feeds Mul (forward direction)
        True
    """
    view = plan_view(graph, detail=detail, depth=depth, rankdir=rankdir, max_boxes=max_boxes)
    return _Writer(graph, view, rankdir, show_saved, max_boxes).write()


def plan_view(
    graph: Graph,
    *,
    detail: Detail = "auto",
    depth: int | None = None,
    rankdir: RankDir = "TB",
    max_boxes: int = MAX_BOXES,
) -> View:
    """What :func:`to_dot` draws (checked arguments, then :func:`gradprobe._layout.build_view`)."""
    check_arguments(graph, detail, depth, rankdir, max_boxes)
    return build_view(graph, detail, depth=depth, max_boxes=max_boxes)


def check_arguments(
    graph: object, detail: object, depth: object, rankdir: object, max_boxes: object
) -> None:
    """Raise the error :func:`to_dot` raises for bad arguments, if any."""
    _check(graph, detail, rankdir)
    _check_depth(depth)
    _check_max_boxes(max_boxes)


def drawn_boxes(graph: Graph, view: View) -> int:
    """Everything a picture lays out: nodes and boxes, the outputs, and the note if any."""
    return view.items + len(graph.roots) + (1 if _has_note(graph, view) else 0)


def full_boxes(graph: Graph) -> int:
    """:func:`drawn_boxes` of ``detail="full"`` without ``depth``, without planning it."""
    note = graph.truncated is not None or graph.freed or bool(graph.notes)
    return len(graph.nodes) + len(graph.roots) + (1 if note else 0)


def _has_note(graph: Graph, view: View) -> bool:
    return bool(
        graph.truncated is not None
        or graph.freed
        or view.hidden
        or _names_missing(view)
        or graph.notes
    )


def _names_missing(view: View) -> bool:
    """Modules were asked for (collapsed, or a depth) but no parameter has a name."""
    return view.modules is None and (view.detail == "collapsed" or view.depth is not None)


def _check_depth(depth: object) -> None:
    if depth is None or (isinstance(depth, int) and not isinstance(depth, bool) and depth >= 1):
        return
    msg = (
        f"depth={depth!r} is not a module depth: pass a positive int (1 draws one box per "
        "top-level module, 2 opens them one level) or None to draw modules at any depth."
    )
    raise GradprobeValueError(msg)


def _check_max_boxes(max_boxes: object) -> None:
    if isinstance(max_boxes, int) and not isinstance(max_boxes, bool) and max_boxes >= 1:
        return
    msg = (
        f"max_boxes={max_boxes!r} must be a positive int: the most boxes a picture lays "
        f"out (default {MAX_BOXES})."
    )
    raise GradprobeValueError(msg)


def _check(graph: object, detail: object, rankdir: object) -> None:
    if not isinstance(graph, Graph):
        msg = (
            f"to_dot() draws a gradprobe Graph, got {describe(graph)}. "
            "Trace the tensor first: to_dot(gradprobe.trace(loss, model=model))."
        )
        raise GradprobeTypeError(msg)
    problem = malformed(graph)
    if problem is not None:
        msg = (
            f"to_dot() cannot draw this Graph: {problem}. Build graphs with gradprobe.trace(), "
            "or keep the invariants Graph documents."
        )
        raise GradprobeValueError(msg)
    if detail not in _DETAILS:
        msg = (
            f"to_dot(detail={detail!r}) is not a known level of detail; "
            f"use one of {', '.join(map(repr, _DETAILS))}."
        )
        raise GradprobeValueError(msg)
    if rankdir not in _RANKDIRS:
        msg = (
            f"to_dot(rankdir={rankdir!r}) is not a Graphviz rank direction; "
            f"use one of {', '.join(map(repr, _RANKDIRS))}."
        )
        raise GradprobeValueError(msg)


# -- escaping ---------------------------------------------------------------------------------


def html_text(text: str, limit: int = _MAX_TEXT) -> str:
    """``text`` made safe inside a Graphviz HTML-like label, shortened to ``limit`` characters.

    Control characters show as Python escapes (``\\n``), markup characters become
    entities, and backslashes are doubled so Graphviz does not expand ``\\N`` or ``\\G``.

    Example:
        >>> html_text('<script>alert("x")</script>')
        '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'
        >>> html_text("a\\\\N")
        'a\\\\\\\\N'
    """
    if len(text) > limit:
        # Keep the end: for dotted names (encoder.layers.11.linear2.weight) it says most.
        text = "…" + text[-(limit - 1) :]
    out: list[str] = []
    for char in text:
        code = ord(char)
        if code < 0x20 or 0x7F <= code <= 0x9F:
            char = _ESCAPES.get(char, f"\\x{code:02x}")
        elif 0xD800 <= code <= 0xDFFF or code in (0xFFFE, 0xFFFF):
            char = "\ufffd"  # lone surrogates and non-characters cannot be written as XML
        out.append(char)
    safe = "".join(out).replace("\\", "\\\\")
    return "".join(_ENTITIES.get(char, char) for char in safe)


def _shape(shape: Sequence[int]) -> str:
    return str(tuple(shape)) if shape else "scalar"


def _plural(count: int, word: str) -> str:
    if count == 1:
        return f"{count} {word}"
    return f"{count:,} {word}es" if word.endswith(("s", "x")) else f"{count:,} {word}s"


# -- writing ----------------------------------------------------------------------------------


def _font(text: str, *, size: int | None = None, color: str | None = None) -> str:
    attrs = ""
    if size is not None:
        attrs += f' POINT-SIZE="{size}"'
    if color is not None:
        attrs += f' COLOR="{color}"'
    return f"<FONT{attrs}>{text}</FONT>" if attrs else text


def _label(lines: Iterable[str]) -> str:
    return "<" + "<BR/>".join(lines) + ">"


def _attrs(**attrs: str) -> str:
    """DOT attributes; values are quoted, except HTML labels (already ``<...>``)."""
    parts = []
    for name, value in attrs.items():
        if name == "label":
            parts.append(f"label={value}")
        else:
            parts.append(f'{name}="{value}"')
    return "[" + ", ".join(parts) + "]"


class _Writer:
    def __init__(
        self,
        graph: Graph,
        view: View,
        rankdir: str,
        show_saved: bool,
        max_boxes: int | None = None,
    ) -> None:
        self.graph = graph
        self.view = view
        self.rankdir = rankdir
        self.show_saved = show_saved
        self.max_boxes = max_boxes
        self.lines: list[str] = []
        self.clusters = 0
        self.freed = graph.freed

    def write(self) -> str:
        self.lines = [
            "digraph gradprobe {",
            (
                f'  graph [rankdir="{self.rankdir}", fontname="{_FONT}", fontsize="10", '
                'nodesep="0.25", ranksep="0.3", newrank="true", labeljust="l"]'
            ),
            (
                f'  node [shape="box", style="rounded,filled", fontname="{_FONT}", '
                'fontsize="10", margin="0.1,0.04", height="0.3", penwidth="0.8"]'
            ),
            f'  edge [arrowsize="0.6", color="{_GREY}"]',
        ]
        self.cluster_body(self.view.top, "  ")
        self.roots()
        self.notes()
        # Leaves sit beside the op that reads them (minlen=0 allows the same rank). A leaf
        # one rank above its reader would stretch the reader's cluster up into the rank
        # of the previous block's last op, and dot then sets consecutive blocks side by
        # side: a staircase instead of a column.
        leaves = {node_key(node.id) for node in self.graph.nodes if node.leaf is not None}
        for edge in self.view.edges:
            # Forward direction: the input (dst) feeds the node that lists it (src).
            attrs = {}
            if edge.dst in leaves:
                attrs["minlen"] = "0"
            if edge.count > 1:
                attrs["penwidth"] = f"{min(1 + edge.count / 4, 3):g}"
            extra = f" {_attrs(**attrs)}" if attrs else ""
            self.lines.append(f"  {edge.dst} -> {edge.src}{extra}")
        self.lines.append("}")
        return "\n".join(self.lines) + "\n"

    # -- clusters -----------------------------------------------------------------------------

    def cluster_body(self, cluster: Cluster, indent: str) -> None:
        for node_id in cluster.nodes:
            node = self.graph.nodes[node_id]
            self.lines.append(f"{indent}{node_key(node_id)} {self.node_attrs(node, cluster)}")
        for box in cluster.boxes:
            self.lines.append(f"{indent}{box.key} {self.box_attrs(box)}")
        for child in cluster.children:
            self.subgraph(child, indent)

    def subgraph(self, cluster: Cluster, indent: str) -> None:
        number = self.clusters
        self.clusters += 1
        depth = cluster.module.count(".")
        fill = _CLUSTER_FILLS[depth % len(_CLUSTER_FILLS)]
        self.lines.append(f"{indent}subgraph cluster_{number} {{")
        inner = indent + "  "
        label = _label([_font(html_text(cluster.module), size=9)])
        attrs = _attrs(label=label, style="rounded,filled", fillcolor=fill, color="#bbbbbb")
        self.lines.append(f"{inner}graph {attrs}")
        self.cluster_body(cluster, inner)
        self.lines.append(f"{indent}}}")

    # -- nodes --------------------------------------------------------------------------------

    def decorate(self, node_id: int, lines: list[str], attrs: dict[str, str]) -> None:
        """Change a node's label lines and attributes before they are written (a finding's
        picture marks its culprits here); the plain graph changes nothing."""

    def node_attrs(self, node: Node, cluster: Cluster) -> str:
        if node.leaf is not None:
            return self.leaf_attrs(node.leaf, node.id)
        lines = [f"<B>{html_text(node.label)}</B>"]
        where = self.local_module(node.id, cluster)
        if where:
            lines.append(_font(html_text(where), size=8, color=_GREY))
        if node.kind != "op":
            lines.append(_font(html_text(node.kind.replace("_", " ")), size=8, color=_GREY))
        folded = self.view.folded.get(node.id)
        if folded:
            lines.append(_font(html_text(self.via(folded)), size=8, color=_GREY))
        for key, value in sorted(node.metadata.items())[:_MAX_METADATA]:
            text = value if key == "forward" else f"{key}: {value}"
            lines.append(_font(html_text(text), size=8, color=_GREY))
        # Stale saved tensors come first and are never cut off: they are the reason to look.
        stale = [s for s in node.saved if s.stale]
        fresh = [s for s in node.saved if not s.stale] if self.show_saved else []
        if node.freed:
            lines.append(_font("saved tensors freed by backward()", size=8, color=_RED))
        else:
            room = max(_MAX_SAVED - len(stale), 0)
            lines.extend(self.saved_line(s) for s in stale + fresh[:room])
            if len(fresh) > room:
                lines.append(_font(f"+{len(fresh) - room} more saved", size=8, color=_GREY))
        attrs = {"label": _label(lines), "fillcolor": _FILL.get(node.kind, _FILL["op"])}
        if node.freed:
            attrs["style"] = "rounded,filled,dashed"
            attrs["fontcolor"] = _GREY
        if stale:
            attrs["color"] = _RED
            attrs["penwidth"] = "2"
        self.decorate(node.id, lines, attrs)
        attrs["label"] = _label(lines)
        return _attrs(**attrs)

    def via(self, folded: Sequence[int]) -> str:
        """``via View → Transpose``: the view ops folded into a node, in forward order."""
        labels = [self.graph.nodes[node_id].label for node_id in folded]
        if len(labels) > _MAX_VIA:
            labels = [*labels[:_MAX_VIA], f"+{len(labels) - _MAX_VIA}"]
        return "via " + " → ".join(labels)

    def local_module(self, node_id: int, cluster: Cluster) -> str:
        """The leaf module (``conv1``) a node belongs to, relative to its cluster."""
        modules = self.view.modules
        if modules is None:
            return ""
        module = modules[node_id]
        prefix = cluster.module + "." if cluster.module else ""
        if not module.startswith(prefix) or module == cluster.module:
            return ""
        return module[len(prefix) :]

    def saved_line(self, saved: SavedTensor) -> str:
        named = f"{saved.name} " if saved.name else ""
        text = f"{saved.slot}: {named}{_shape(saved.shape)} {saved.dtype}"
        if saved.device != "cpu":
            text += f" {saved.device}"
        now = "?" if saved.version_now is None else str(saved.version_now)
        if saved.stale:
            version = f" saved v{saved.version_saved} → now v{now} STALE"
            return _font(html_text(text, 2 * _MAX_TEXT) + html_text(version), size=8, color=_RED)
        return _font(html_text(f"{text} v{now}", 2 * _MAX_TEXT), size=8)

    def leaf_attrs(self, leaf: Leaf, node_id: int) -> str:
        name = leaf.name if leaf.name is not None else "tensor"
        detail = f"{_shape(leaf.shape)} {leaf.dtype}"
        if leaf.device != "cpu":
            detail += f" {leaf.device}"
        if leaf.has_grad:
            grad = "grad ✓"
        elif self.freed:  # backward ran through this graph and left no .grad here
            grad = "no grad"
        else:  # traced before the backward that will fill it
            grad = "grad not computed yet"
        lines = [
            f"<B>{html_text(name)}</B>",
            _font(html_text(detail), size=8),
            _font(grad, size=8, color=_GREY),
        ]
        attrs = {"fillcolor": _FILL[leaf.kind]}
        self.decorate(node_id, lines, attrs)
        return _attrs(label=_label(lines), **attrs)

    def box_attrs(self, box: Box) -> str:
        kind = f": {box.type}" if box.type else ""
        if box.kind in ("module", "repeat"):
            if box.count == 1:
                head = f"{box.first}{kind}"
            else:
                head = f"{box.first} … {box.last}: {box.count} × {box.type or 'blocks'}"
            lines = [f"<B>{html_text(head)}</B>"]
            if box.like is not None:
                lines.append(_font(f"same as {html_text(box.like)}, drawn in full", size=8))
            each = " each" if box.count > 1 and box.like is not None else ""
            nodes = box.nodes // box.count if each else box.nodes
            params = "no parameters" if not box.params else f"{_amount(box.size)} parameters"
            if box.count > 1 and box.params:
                params += " in all"
            lines.append(_font(f"{_plural(nodes, 'node')}{each} · {params}", size=8, color=_GREY))
            shape = "box3d" if box.count > 1 else "box"
            return _attrs(label=_label(lines), shape=shape, style="filled", fillcolor=_FILL["box"])
        if box.kind == "run":
            lines = [
                f"<B>{box.count:,} × {html_text(box.first)}</B>",
                _font(
                    f"{box.nodes:,} more nodes: the ops just above, {box.count:,} more times",
                    size=8,
                    color=_GREY,
                ),
            ]
            return _attrs(
                label=_label(lines), shape="box3d", style="filled", fillcolor=_FILL["box"]
            )
        lines = [
            f"<B>… {_plural(box.nodes, 'more node')}</B>",
            _font("farther from the outputs; not drawn", size=8, color=_GREY),
        ]
        return _attrs(
            label=_label(lines), shape="box", style="filled,dashed", fillcolor=_FILL["note"]
        )

    # -- roots and notes ----------------------------------------------------------------------

    def roots(self) -> None:
        for index, root in enumerate(self.graph.roots):
            key = f"r{index}"
            self.lines.append(f"  {key} {self.root_attrs(root)}")
            if root.node is not None:
                self.lines.append(f'  {self.view.keys[root.node]} -> {key} [style="bold"]')

    def root_attrs(self, root: Root) -> str:
        lines = [
            f"<B>{html_text(root.name)}</B>",
            _font(html_text(f"{_shape(root.shape)} {root.dtype}"), size=8),
        ]
        if root.node is None:
            lines.append(_font("no autograd graph", size=8, color=_RED))
        return _attrs(
            label=_label(lines),
            shape="oval",
            style="filled,bold",
            fillcolor=_FILL["root"],
        )

    def notes(self) -> None:
        graph, view = self.graph, self.view
        lines: list[str] = []
        if graph.truncated is not None:
            cut = graph.truncated
            lines.append(
                _font(
                    f"⚠ truncated at max_nodes={cut.max_nodes}: "
                    f"{cut.unexplored}+ nodes reached but not traced",
                    color=_RED,
                )
            )
        if graph.freed:
            lines.append(_font("⚠ freed: backward() already released saved tensors", color=_RED))
        if view.hidden:
            lines.extend(_wrapped(_summary(graph, view, self.max_boxes)))
        elif _names_missing(view):
            lines.extend(
                _wrapped(
                    "no parameter names, so nothing could be grouped into modules: "
                    "pass model= to gradprobe.trace()"
                )
            )
        for note in graph.notes:
            lines.extend(_font(line, size=8) for line in _wrapped(note))
        if lines:
            self.lines.append(
                f"  notes {_attrs(label=_label(lines), shape='note', fillcolor=_FILL['note'])}"
            )


def _amount(count: int) -> str:
    """``9,408`` → ``9.4k``, ``25,557,032`` → ``25.6M``."""
    for limit, suffix in ((10**9, "G"), (10**6, "M"), (10**3, "k")):
        if count >= limit:
            return f"{count / limit:.1f}{suffix}"
    return str(count)


def _summary(graph: Graph, view: View, max_boxes: int | None) -> str:
    """What a reduced picture left out, and how to see it."""
    folded = sum(len(ids) for ids in view.folded.values())
    boxes = list(_boxes(view.top))
    rest = sum(box.nodes for box in boxes if box.kind == "rest")
    boxed = view.hidden - folded - rest
    total = len(graph.nodes)
    parts = []
    if boxed:
        count = sum(1 for box in boxes if box.kind != "rest")
        parts.append(f"{boxed:,} of {total:,} nodes are inside {_plural(count, 'box')}")
    if folded:
        parts.append(
            f"{folded:,} view/reshape/transpose ops are folded into the op that reads them "
            "(its 'via' line)"
        )
    if rest:
        parts.append(
            f"the {rest:,} nodes farthest from the outputs are not drawn, to keep the "
            f"picture under max_boxes={max_boxes}"
        )
    hints = ["detail='full' draws every node"]
    if rest:
        hints = [
            f"a larger max_boxes= draws more of them (slower), trace(max_nodes={max_boxes}) fewer"
        ]
    if view.modules is not None and view.depth is None:
        hints.append("depth=1 one box per top-level module")
    elif view.modules is not None and view.depth is not None:
        hints.append(f"depth={view.depth + 1} opens the boxes one level")
    kind = "collapsed view" if view.depth is None else f"module view, depth={view.depth}"
    return f"{kind}: " + "; ".join(parts) + "; " + ", ".join(hints)


def _wrapped(text: str, width: int = 72) -> list[str]:
    """``text`` escaped, in lines of at most ``width`` characters (notes can be long)."""
    return [html_text(line, 4 * width) for line in textwrap.wrap(text, width) or [""]]


def _boxes(cluster: Cluster) -> Iterable[Box]:
    yield from cluster.boxes
    for child in cluster.children:
        yield from _boxes(child)
