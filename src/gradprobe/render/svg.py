"""Lay out DOT text as SVG with a Graphviz engine found on this machine.

Engines, first match wins:

1. ``to_svg(..., engine=...)``: a path to an executable, or a command name on ``PATH``;
2. the ``GRADPROBE_DOT`` environment variable, same form;
3. the system Graphviz ``dot`` on ``PATH``;
4. ``graphviz-pure``, the pure-Rust port on PyPI (a gradprobe dependency). It installs one
   binary, ``graphviz-pure``, into the environment's scripts directory and no Python
   code, so it is looked up on ``PATH``, then in the scripts directories of this Python
   (found even when the virtualenv is not activated), then through the files its
   distribution recorded at install time.

Both engines take the same command line (``-Tsvg``, DOT on stdin, SVG on stdout) but lay
out differently, so tests of SVG output check its structure, never its coordinates.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Literal

from gradprobe._layout import Detail
from gradprobe.errors import (
    GradprobeTypeError,
    GradprobeValueError,
    GraphvizNotFoundError,
    RenderError,
    describe,
)
from gradprobe.graph import Graph
from gradprobe.render.dot import (
    MAX_BOXES,
    RankDir,
    _Writer,
    check_arguments,
    drawn_boxes,
    full_boxes,
    plan_view,
)

__all__ = ["ENGINE_ENV", "Engine", "find_engine", "save_svg", "to_svg"]

ENGINE_ENV = "GRADPROBE_DOT"
"""Environment variable naming the Graphviz executable to use (a path or a command)."""

_PURE = "graphviz-pure"
_FIXES = (
    "Install one of: the graphviz-pure package (`pip install graphviz-pure`, no system "
    "libraries needed), or the system Graphviz package (`apt-get install graphviz`, "
    "`brew install graphviz` or `conda install graphviz`). To use a dot executable "
    f"elsewhere, set {ENGINE_ENV}=/path/to/dot or pass engine='/path/to/dot'."
)


@dataclass(frozen=True)
class Engine:
    """A Graphviz executable and how it was found.

    ``source`` is ``"argument"`` (``engine=``), ``"environment"`` (``GRADPROBE_DOT``),
    ``"dot"`` (system Graphviz on ``PATH``) or ``"graphviz-pure"``.
    """

    path: Path
    source: Literal["argument", "environment", "dot", "graphviz-pure"]


def find_engine(engine: str | os.PathLike[str] | None = None) -> Engine:
    """The Graphviz executable :func:`to_svg` would run.

    Raises:
        GraphvizNotFoundError: the requested engine does not exist, or none was
            requested and neither ``dot`` nor ``graphviz-pure`` is installed. The
            message names both ways to install one.

    Example:
        >>> find_engine().source in ("environment", "dot", "graphviz-pure")
        True
    """
    requested = _check_engine(engine)
    if requested is not None:
        return Engine(_resolve(requested, "engine="), "argument")
    requested = os.environ.get(ENGINE_ENV)
    if requested:
        return Engine(_resolve(requested, f"the {ENGINE_ENV} environment variable"), "environment")
    found = _system_dot()
    if found is not None:
        return Engine(found, "dot")
    found = _graphviz_pure()
    if found is not None:
        return Engine(found, "graphviz-pure")
    msg = (
        "Rendering a graph as SVG needs a Graphviz layout engine, but neither the system "
        f"'dot' (looked up on PATH) nor '{_PURE}' (looked up on PATH, in this Python's "
        f"scripts directory {sysconfig.get_path('scripts')!r} and in the installed "
        f"packages) was found. {_FIXES} Without an engine, gradprobe.render.to_dot() "
        "still gives the DOT text."
    )
    raise GraphvizNotFoundError(msg)


def _check_engine(engine: object) -> str | None:
    if engine is None:
        return None
    if isinstance(engine, (str, os.PathLike)):
        text = os.fspath(engine)
        if isinstance(text, str):
            return text
    msg = (
        f"engine= must be a path or command name of a Graphviz executable, "
        f"got {describe(engine)}; e.g. engine='dot' or engine='/usr/bin/dot'."
    )
    raise GradprobeTypeError(msg)


def _check_timeout(timeout: object) -> float:
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        msg = f"to_svg(timeout={timeout!r}) must be a positive number of seconds, e.g. 60."
        raise GradprobeValueError(msg)
    return float(timeout)


def _check_path(path: object) -> Path:
    if isinstance(path, (str, os.PathLike)):
        return Path(path)
    msg = f"save_svg() writes to a file path, got {describe(path)}; e.g. 'graph.svg'."
    raise GradprobeTypeError(msg)


def _resolve(requested: str, where: str) -> Path:
    """An explicit engine: an executable file path, or a command found on PATH."""
    path = Path(requested).expanduser()
    if path.is_file() and os.access(path, os.X_OK):
        return path
    found = shutil.which(requested)
    if found is not None:
        return Path(found)
    msg = (
        f"The Graphviz engine {requested!r} given by {where} is not an executable file "
        f"and is not a command on PATH. Point it at a dot-compatible executable (e.g. "
        f"/usr/bin/dot or the {_PURE} binary), or unset it to let gradprobe search. {_FIXES}"
    )
    raise GraphvizNotFoundError(msg)


def _system_dot() -> Path | None:
    found = shutil.which("dot")
    return Path(found) if found is not None else None


def _graphviz_pure() -> Path | None:
    found = shutil.which(_PURE)
    if found is not None:
        return Path(found)
    name = _PURE + ".exe" if os.name == "nt" else _PURE
    # A virtualenv used without activation: its bin/ (Scripts\\) is not on PATH.
    directories: list[str] = [sysconfig.get_path("scripts"), str(Path(sys.executable).parent)]
    with contextlib.suppress(KeyError):  # no per-user scheme on this platform
        directories.append(sysconfig.get_path("scripts", f"{os.name}_user"))
    for directory in directories:
        candidate = Path(directory) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    # Installed with a custom --prefix or --target: the wheel's RECORD knows where.
    try:
        files = metadata.distribution(_PURE).files or []
    except metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.name == name:
            candidate = Path(str(file.locate())).resolve()
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return candidate
    return None


def to_svg(
    graph: Graph,
    *,
    detail: Detail = "auto",
    depth: int | None = None,
    rankdir: RankDir = "TB",
    show_saved: bool = True,
    max_boxes: int = MAX_BOXES,
    engine: str | os.PathLike[str] | None = None,
    timeout: float = 60.0,
) -> str:
    """The graph drawn as SVG text, laid out by Graphviz.

    Args:
        graph: what :func:`gradprobe.trace` returned.
        detail, depth, rankdir, show_saved: as for :func:`gradprobe.render.to_dot`.
        max_boxes: the most boxes to lay out. ``detail="auto"`` draws the boxes nearest
            the outputs and one box for the rest; an explicit ``detail`` or ``depth``
            that needs more raises at once, before any layout, saying what would fit.
        engine: the Graphviz executable to run (path or command name); default: see
            :func:`find_engine`.
        timeout: seconds to wait for the engine.

    Returns:
        An SVG document (UTF-8 text).

    Raises:
        GraphvizNotFoundError: no layout engine (the message says how to install one).
        RenderError: the picture would have more than ``max_boxes`` boxes, or the engine
            failed or timed out (the message includes its stderr).
    """
    seconds = _check_timeout(timeout)
    check_arguments(graph, detail, depth, rankdir, max_boxes)
    if detail == "full" and depth is None and full_boxes(graph) > max_boxes:
        # Every node would be drawn: refuse before planning it (2 s for 200k nodes).
        raise RenderError(_too_big(graph, detail, depth, full_boxes(graph), max_boxes))
    view = plan_view(graph, detail=detail, depth=depth, rankdir=rankdir, max_boxes=max_boxes)
    size = drawn_boxes(graph, view)
    if size > max_boxes:
        raise RenderError(_too_big(graph, detail, depth, size, max_boxes))
    dot = _Writer(graph, view, rankdir, show_saved, max_boxes).write()
    return _run(find_engine(engine), dot, seconds, size)


def _too_big(graph: Graph, detail: str, depth: int | None, size: int, max_boxes: int) -> str:
    """Why an explicit view is not laid out, and views that would be."""
    asked = f"detail={detail!r}" + (f", depth={depth}" if depth is not None else "")
    auto = drawn_boxes(graph, plan_view(graph, max_boxes=max_boxes))
    fixes = [f"to_svg(graph) (detail='auto') draws {auto:,} boxes for this graph"]
    if any(leaf.kind == "parameter" and leaf.name for leaf in graph.leaves):
        top = drawn_boxes(graph, plan_view(graph, depth=1, max_boxes=max_boxes))
        if top <= max_boxes:
            fixes.append(f"depth=1 draws {top:,}, one box per top-level module")
    nodes = max(max_boxes - len(graph.roots) - 2, 1)
    fixes.append(
        f"gradprobe.trace(..., max_nodes={nodes}) traces only the {nodes:,} nodes nearest "
        "the outputs"
    )
    fixes.append(f"max_boxes={size} lays it out anyway (Graphviz may take many minutes)")
    return (
        f"to_svg({asked}) would lay out {size:,} boxes, more than max_boxes={max_boxes:,}: "
        "Graphviz's time grows faster than the picture, so this was not attempted. "
        "Instead: " + "; ".join(fixes) + ". to_dot() gives the DOT text without layout."
    )


def save_svg(
    graph: Graph,
    path: str | os.PathLike[str],
    *,
    detail: Detail = "auto",
    depth: int | None = None,
    rankdir: RankDir = "TB",
    show_saved: bool = True,
    max_boxes: int = MAX_BOXES,
    engine: str | os.PathLike[str] | None = None,
    timeout: float = 60.0,
) -> Path:
    """Write :func:`to_svg`'s output to ``path`` (UTF-8) and return the path."""
    target = _check_path(path)
    svg = to_svg(
        graph,
        detail=detail,
        depth=depth,
        rankdir=rankdir,
        show_saved=show_saved,
        max_boxes=max_boxes,
        engine=engine,
        timeout=timeout,
    )
    target.write_text(svg, encoding="utf-8")
    return target


def _run(engine: Engine, dot: str, timeout: float, size: int) -> str:
    command = [str(engine.path), "-Tsvg"]
    try:
        done = subprocess.run(
            command, input=dot.encode("utf-8"), capture_output=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        msg = (
            f"Graphviz ({engine.path}) did not finish laying out a picture of {size:,} "
            f"boxes within timeout={timeout:g} s. Draw less of it: detail='auto' with a "
            "smaller max_boxes=, or depth=1 (one box per top-level module); or pass a "
            "larger timeout."
        )
        raise RenderError(msg) from None
    except OSError as exc:
        msg = (
            f"Could not run the Graphviz engine {str(engine.path)!r} (found via "
            f"{engine.source}): {exc}. {_FIXES}"
        )
        raise RenderError(msg) from None
    if done.returncode != 0:
        stderr = done.stderr.decode("utf-8", errors="replace").strip() or "(no output)"
        if len(stderr) > 2000:
            stderr = stderr[:2000] + " …"
        msg = (
            f"Graphviz ({engine.path}, found via {engine.source}) failed with exit status "
            f"{done.returncode} while laying out a picture of {size:,} boxes as SVG. "
            f"Its error output:\n{stderr}\n"
            "If this engine is not a dot-compatible Graphviz, point engine= or "
            f"{ENGINE_ENV} at one; to_dot() gives the DOT text to inspect."
        )
        raise RenderError(msg)
    return _for_any_viewer(done.stdout.decode("utf-8", errors="replace"))


_FAMILY = re.compile(r'font-family="DejaVu Sans[^"]*"')
_CLASS = re.compile(r'class="[^"]*&#45;[^"]*"')
_FAMILIES = 'font-family="DejaVu Sans,Helvetica,Arial,sans-serif"'


def _for_any_viewer(svg: str) -> str:
    """Labels that fit their boxes whatever fonts the viewer has.

    The boxes are sized for DejaVu Sans (see ``gradprobe.render.dot``), so a viewer
    without it should take a font of Helvetica's metrics, narrower, rather than its
    default serif. ``geometricPrecision`` asks for the font's own advance widths: with
    hinting, browsers round each glyph to whole pixels, which made long lines up to 4%
    wider than any metrics say (measured in Chromium at 100% zoom).

    Example:
        >>> svg = _for_any_viewer('<svg width="1pt"><text font-family="DejaVu Sans">x</text>')
        >>> svg.split("<text")[0]
        '<svg text-rendering="geometricPrecision" width="1pt">'
        >>> svg.split("<text")[1]
        ' font-family="DejaVu Sans,Helvetica,Arial,sans-serif">x</text>'
    """
    svg = svg.replace("<svg ", '<svg text-rendering="geometricPrecision" ', 1)
    svg = _CLASS.sub(lambda m: m.group(0).replace("&#45;", "-"), svg)  # gp-problem, greppable
    return _FAMILY.sub(_FAMILIES, svg)
