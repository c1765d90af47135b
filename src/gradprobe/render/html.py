"""The interactive viewer: one self-contained HTML file for a graph or a recording.

:func:`save_html` writes a page that needs nothing but a browser: the viewer's script and
style (``gradprobe/render/viewer/``, shipped with the package) and the graph's data are
inlined, and the page's Content-Security-Policy forbids every network request. In it:
pan (drag) and zoom (wheel), search by name (a parameter, an op, a module), modules that
expand and collapse (only what is open is laid out, so a 100,000-node graph opens as a
few dozen boxes), a click on a node shows its forward source line (when a recording saw
it), saved tensors with their versions, and the gradient statistics of a watch session;
the findings of a recording are listed in a side panel, and a click on one highlights
its slice of the graph.

Example:
    >>> import torch, gradprobe
    >>> w = torch.ones(3, requires_grad=True)
    >>> page = to_html(gradprobe.trace((w * 2).sum(), names={"w": w}))
    >>> page.startswith("<!DOCTYPE html>"), "http://" in page or "https://" in page
    (True, False)
"""

from __future__ import annotations

import bisect
import html
import json
import os
import uuid
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gradprobe.errors import GradprobeError, GradprobeTypeError, describe
from gradprobe.graph import Edge, Graph, Leaf, Node, SavedTensor, malformed
from gradprobe.render._viewer_data import SourceLine, viewer_data

if TYPE_CHECKING:
    from gradprobe._recorder import Events
    from gradprobe.findings import Finding

__all__ = ["notebook_bundle", "save_html", "to_html"]

_ACCUMULATE = "torch::autograd::AccumulateGrad"
_MAX_RECORDED = 200_000  # recorded nodes a recording's page shows (the latest)
_MAX_STATIC = 3_000  # nodes up to which a notebook also gets a static SVG
# The viewer data a notebook output embeds at most: Jupyter servers drop output above
# 1 MB/s averaged over 3 s (ServerApp.iopub_data_rate_limit, rate_limit_window).
_NOTEBOOK_DATA = 2_000_000
_CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; font-src data:"
)


def _asset(name: str) -> str:
    return (resources.files("gradprobe.render") / "viewer" / name).read_text(encoding="utf-8")


def _json(data: Mapping[str, Any]) -> str:
    """JSON safe inside a ``<script>`` element (no ``</script>``, no ``<!--``)."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


# -- what a page shows ------------------------------------------------------------------------


def _is_recording(value: object) -> bool:
    kind = type(value)
    return kind.__name__ == "Recording" and kind.__module__ == "gradprobe._record"


def _history(watch: object) -> Sequence[Any]:
    if watch is None:
        return ()
    kind = type(watch)
    if not (kind.__name__ == "WatchSession" and kind.__module__.startswith("gradprobe._watch")):
        msg = (
            f"save_html(watch=...) takes a gradprobe.watch() session, got {describe(watch)}; "
            "e.g. `with gradprobe.watch(model) as session: ...` then watch=session."
        )
        raise GradprobeTypeError(msg)
    history: Sequence[Any] = watch.history  # type: ignore[attr-defined]
    return history


def _data(subject: object, recording: object, watch: object, title: str | None) -> dict[str, Any]:
    history = _history(watch)
    if _is_recording(subject):
        if recording is not None:
            msg = "save_html(recording, ..., recording=...) was given two recordings; pass one."
            raise GradprobeTypeError(msg)
        events: Events = subject._events  # type: ignore[attr-defined]
        findings: list[Finding] = list(subject.findings)  # type: ignore[attr-defined]
        graph, paths, lines, notes = recorded_graph(events, findings)
        calls = len(events.backwards)
        summary = (
            f"{len(graph):,} recorded nodes, {calls} backward call{'' if calls == 1 else 's'}, "
            f"{len(findings)} finding{'' if len(findings) == 1 else 's'}"
        )
        return viewer_data(
            graph,
            title=title or "gradprobe: what the recording saw",
            paths=paths,
            lines=lines,
            findings=findings,
            history=history,
            notes=notes,
            summary=summary,
        )
    if not isinstance(subject, Graph):
        msg = (
            f"save_html() shows a gradprobe Graph or Recording, got {describe(subject)}; "
            "e.g. save_html(gradprobe.trace(loss, model=model), 'graph.html') or "
            "save_html(rec, 'run.html') after `with gradprobe.record() as rec:`."
        )
        raise GradprobeTypeError(msg)
    problem = malformed(subject)
    if problem is not None:
        msg = f"save_html() cannot show this Graph: {problem}."
        raise GradprobeTypeError(msg)
    lines_by_key: dict[tuple[str, int], SourceLine | None] = {}
    findings = []
    if recording is not None:
        if not _is_recording(recording):
            msg = (
                f"save_html(recording=...) takes a gradprobe.record() Recording, got "
                f"{describe(recording)}."
            )
            raise GradprobeTypeError(msg)
        events = recording._events  # type: ignore[attr-defined]
        lines_by_key = {key: record.line for key, record in events.nodes.items()}
        findings = list(recording.findings)  # type: ignore[attr-defined]
    return viewer_data(
        subject,
        title=title or f"gradprobe: {subject.model or 'graph'}",
        lines=lines_by_key,
        findings=findings,
        history=history,
    )


def recorded_graph(
    events: Events, findings: Sequence[Finding] = ()
) -> tuple[Graph, list[tuple[str, ...]], dict[tuple[str, int], SourceLine | None], list[str]]:
    """The nodes a recording saw as a :class:`Graph` (the latest :data:`_MAX_RECORDED`),
    grouped by the ``backward()`` call whose forward pass made them, with their lines.
    A saved tensor's version now is the last one a recorded in-place write gave its
    storage (the recorder keeps no tensor to ask). The recorder does not note leaves:
    the parameters in the findings' slices are added, and those without gradient."""
    keys = list(events.nodes)[-_MAX_RECORDED:]
    notes = []
    if len(events.nodes) > len(keys):
        notes.append(f"showing the latest {len(keys):,} of {len(events.nodes):,} recorded nodes")
    ids = {key: index for index, key in enumerate(keys)}
    # a saved tensor's version now: the last recorded in-place write to its storage
    written: dict[int, int] = {}
    for write in events.writes:
        if write.version_after is not None:
            written[write.storage] = max(written.get(write.storage, -1), write.version_after)
    nodes = []
    edges = []
    slots = [0] * len(keys)
    for key in keys:
        record = events.nodes[key]
        saved = tuple(
            SavedTensor(
                slot,
                (),
                "unknown",
                "",
                max(version, written.get(storage, version)),
                version_saved=version,
            )
            for slot, (version, storage) in record.saves.items()
        )
        nodes.append(Node(id=ids[key], name=key[0], kind="op", sequence_nr=key[1], saved=saved))
    for key in keys:
        for parent in events.nodes[key].consumers:
            source = ids.get(parent)
            if source is not None:
                edges.append(Edge(source, ids[key], slots[source], 0))
                slots[source] += 1
    backwards = sorted(events.backwards, key=lambda b: b.order)
    orders = [b.order for b in backwards]
    paths: list[tuple[str, ...]] = []
    for key in keys:
        step = bisect.bisect(orders, events.nodes[key].order)
        if step < len(backwards):
            paths.append((f"backward {step + 1}",))
        else:
            paths.append(("after the last backward" if backwards else "",))
    if len({p for p in paths}) <= 1:
        paths = [()] * len(keys)
    lines = {key: events.nodes[key].line for key in keys}
    paths = [p if p != ("",) else () for p in paths]
    _add_leaves(nodes, edges, paths, ids, findings)
    graph = Graph(nodes=tuple(nodes), edges=tuple(edges), roots=())
    return graph, paths, lines, notes


def _add_leaves(
    nodes: list[Node],
    edges: list[Edge],
    paths: list[tuple[str, ...]],
    ids: Mapping[tuple[str, int], int],
    findings: Sequence[Finding],
) -> None:
    """The named leaves of the findings' slices, each tied to the recorded nodes that read
    it, and the parameters findings say got no gradient (unconnected: that is the bug)."""
    leaves: dict[str, int] = {}

    def leaf_node(leaf: Leaf) -> int:
        found = leaves.get(leaf.name or "")
        if found is None:
            found = leaves[leaf.name or ""] = len(nodes)
            nodes.append(Node(id=found, name=_ACCUMULATE, kind="accumulate_grad", leaf=leaf))
            paths.append(())
        return found

    linked: set[tuple[int, int]] = set()
    for finding in findings:
        part = finding.graph_slice
        if part is None:
            continue
        for node in part.graph.nodes:
            if node.leaf is None or not node.leaf.name:
                continue
            leaf = leaf_node(node.leaf)
            for edge in part.graph.parents(node.id):
                reader = part.graph.nodes[edge.src]
                source = ids.get((reader.name, reader.sequence_nr or -1))
                if source is not None and (source, leaf) not in linked:
                    linked.add((source, leaf))
                    edges.append(Edge(source, leaf, edge.slot, edge.input_nr))
                    paths[leaf] = paths[source]
        for missing in part.missing:
            leaf_node(Leaf(missing.name, "parameter", (), "unknown", "", True, True, False, False))


# -- pages --------------------------------------------------------------------------------------


def _viewer(encoded: str, uid: str, fallback: str) -> str:
    """The viewer's host element, its data (``encoded`` by :func:`_json`), script and style,
    mounting on load. Each output carries its own copy of the script: a notebook page may
    hold outputs made by several gradprobe versions, each mounting with its own."""
    return (
        f'<div class="gp-viewer-host" id="gp-viewer-{uid}">{fallback}</div>\n'
        f'<script type="application/json" id="gp-data-{uid}">{encoded}</script>\n'
        f"<style>{_asset('viewer.css')}</style>\n"
        f"<script>\n{_asset('layout.js')}\n{_asset('viewer.js')}\n{_asset('panels.js')}\n"
        f'gradprobeViewer.mount(document.getElementById("gp-viewer-{uid}"), '
        f'JSON.parse(document.getElementById("gp-data-{uid}").textContent));\n</script>\n'
    )


def to_html(
    subject: Graph | Any,
    *,
    recording: Any = None,
    watch: Any = None,
    title: str | None = None,
) -> str:
    """The viewer page of ``subject`` (a :class:`~gradprobe.graph.Graph` or a
    ``gradprobe.record()`` Recording) as one self-contained HTML document.

    Args:
        subject: what to show: a traced graph, or a recording (its recorded nodes, grouped
            by backward call, each with the line that made it, and its findings).
        recording: with a graph: the recording the graph was traced in (or next to);
            adds each node's forward source line and the findings, their slices
            highlighted on this graph.
        watch: a ``gradprobe.watch()`` session: the gradient statistics of each parameter.
        title: the page title (default: the model's class name).

    Raises:
        GradprobeTypeError: ``subject``, ``recording`` or ``watch`` is of the wrong kind.
    """
    data = _data(subject, recording, watch, title)
    page_title = html.escape(str(data["title"]))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<title>{page_title}</title></head>\n<body class="gp-page">\n'
        + _viewer(_json(data), "page", "<noscript>This viewer needs JavaScript.</noscript>")
        + "</body></html>\n"
    )


def save_html(
    subject: Graph | Any,
    path: str | os.PathLike[str],
    *,
    recording: Any = None,
    watch: Any = None,
    title: str | None = None,
) -> Path:
    """Write :func:`to_html` to ``path`` (UTF-8) and return the path.

    Example:
        >>> import torch, gradprobe, tempfile, pathlib
        >>> net = torch.nn.Linear(3, 1)
        >>> graph = gradprobe.trace(net(torch.ones(2, 3)).sum(), model=net)
        >>> out = gradprobe.save_html(graph, pathlib.Path(tempfile.mkdtemp()) / "g.html")
        >>> out.suffix, out.stat().st_size > 10_000
        ('.html', True)
    """
    given: object = path
    if not isinstance(given, (str, os.PathLike)):
        msg = f"save_html() writes to a file path, got {describe(path)}; e.g. 'graph.html'."
        raise GradprobeTypeError(msg)
    target = Path(path)
    page = to_html(subject, recording=recording, watch=watch, title=title)
    target.write_text(page, encoding="utf-8")
    return target


def notebook_bundle(subject: Graph | Any, *, report: str | None = None) -> dict[str, str]:
    """What a notebook shows for ``subject`` (a Graph, or a Recording with its findings
    ``report`` as HTML): the viewer as ``text/html``, with a static view inside its host
    element until its script runs (a Graph's SVG picture, a Recording's findings report),
    so front-ends that render HTML but run no JavaScript (an untrusted notebook, GitHub)
    show that instead; for a Graph, also the SVG alone as ``image/svg+xml``, for
    front-ends that render no HTML.

    The host's id is random: outputs of several kernel sessions share one page, and two
    viewers never share an element. Data above :data:`_NOTEBOOK_DATA` bytes is not
    embedded (a Jupyter server drops outputs that large); the static view says to open
    :func:`save_html`'s page instead.
    """
    bundle: dict[str, str] = {"text/plain": repr(subject)}
    if _is_recording(subject):
        static = report if report is not None else html.escape(str(subject))
        call = "gradprobe.save_html(rec, 'run.html')"
    else:
        svg = _static_svg(subject)
        bundle["image/svg+xml"] = svg
        static = svg[svg.find("<svg") :] if "<svg" in svg else html.escape(svg)
        call = "gradprobe.save_html(graph, 'graph.html')"
    encoded = _json(_data(subject, None, None, None))
    if len(encoded) > _NOTEBOOK_DATA:
        note = (
            f"The interactive viewer's data is {len(encoded) / 1e6:.1f} MB, too large for a "
            f"notebook output; {call} writes it to a page to open in a browser."
        )
        bundle["text/html"] = f'<p class="gp-note">{html.escape(note)}</p>\n{static}'
        return bundle
    fallback = f'<div class="gp-fallback">{static}</div>'
    bundle["text/html"] = _viewer(encoded, uuid.uuid4().hex[:16], fallback)
    return bundle


def _static_svg(graph: Graph) -> str:
    from gradprobe.render.svg import to_svg

    if len(graph) <= _MAX_STATIC:
        try:
            return to_svg(graph)
        except GradprobeError as error:
            note = f"{graph!r}: no static picture ({error})"
    else:
        note = f"{graph!r}: too large for a static picture; the interactive viewer shows it"
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" width="640" height="40">'
        f'<text x="8" y="24" font-family="sans-serif" font-size="13">{html.escape(note)}</text>'
        "</svg>"
    )
