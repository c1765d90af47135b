"""SVG rendering (gradprobe.render.svg): engine discovery, real layouts, failures.

Layouts differ between the system ``dot`` and ``graphviz-pure``, so these tests check the
SVG's structure (node titles, text, clusters), never coordinates. Every engine found on
this machine is exercised; the engine is never mocked.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import sysconfig
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import torch
from benchmarks import models
from hypothesis import given, settings

import gradprobe
from gradprobe.errors import (
    GradprobeTypeError,
    GradprobeValueError,
    GraphvizNotFoundError,
    RenderError,
)
from gradprobe.graph import Graph
from gradprobe.render import find_engine, save_svg, to_svg
from gradprobe.render import svg as render_svg
from strategies import random_graphs
from test_render_dot import EVIL, _evil_graph

SVG = "{http://www.w3.org/2000/svg}"
posix_only = pytest.mark.skipif(os.name != "posix", reason="uses a /bin/sh script as engine")


def _engines() -> list[Any]:  # pytest.param(...) values
    found = []
    system = render_svg._system_dot()
    if system is not None:
        found.append(pytest.param(system, id="dot"))
    pure = render_svg._graphviz_pure()
    if pure is not None:
        found.append(pytest.param(pure, id="graphviz-pure"))
    return found


ENGINES = _engines()


@pytest.fixture(autouse=True)
def _no_engine_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(render_svg.ENGINE_ENV, raising=False)


def _mul_graph() -> Graph:
    w = torch.ones(3, requires_grad=True)
    return gradprobe.trace((w * w).sum(), names={"w": w})


def _parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)  # raises on anything that is not well-formed XML
    assert root.tag == f"{SVG}svg"
    return root


def _groups(root: ET.Element, kind: str) -> dict[str, list[str]]:
    """``<g class=kind>`` elements: their <title> -> the text of their <text> elements."""
    out = {}
    for group in root.iter(f"{SVG}g"):
        if group.get("class") == kind:
            title = group.findtext(f"{SVG}title") or ""
            out[title] = [t.text or "" for t in group.iter(f"{SVG}text")]
    return out


# -- real layouts ---------------------------------------------------------------------------------


def test_at_least_one_engine_is_installed() -> None:
    assert ENGINES, "graphviz-pure is a dependency of gradprobe; it should always be found"


@pytest.mark.parametrize("engine", ENGINES)
def test_tiny_graph_renders(engine: Path) -> None:
    root = _parse(to_svg(_mul_graph(), engine=engine))
    nodes = _groups(root, "node")
    assert set(nodes) == {"n0", "n1", "n2", "r0"}
    assert nodes["n1"][0] == "Mul" and "self: w (3,) float32 v0" in nodes["n1"]
    assert nodes["n2"] == ["w", "(3,) float32", "grad not computed yet"]
    assert nodes["r0"] == ["output", "scalar float32"]
    edges = set(_groups(root, "edge"))
    assert edges == {"n0->r0", "n1->n0", "n2->n1"}


@pytest.mark.parametrize("engine", ENGINES)
def test_names_cannot_inject_markup_into_svg(engine: Path) -> None:
    root = _parse(to_svg(_evil_graph(), detail="full", engine=engine))
    tags = {element.tag.rpartition("}")[2] for element in root.iter()}
    assert "script" not in tags and "foreignObject" not in tags
    texts = "\n".join(text for group in _groups(root, "node").values() for text in group)
    clusters = "\n".join(text for group in _groups(root, "cluster").values() for text in group)
    for name in EVIL:
        shown = name.replace("\n", "\\n").replace("\t", "\\t").replace("\x00", "\\x00")
        assert shown in texts, name
        assert shown in clusters, name  # module names label their clusters


@pytest.mark.parametrize("engine", ENGINES)
def test_model_clusters_and_collapsed_repeats(engine: Path) -> None:
    model = models.transformer_encoder(6, d_model=16, nhead=2)
    graph = gradprobe.trace(model(torch.randn(2, 5, 16)).sum(), model=model)
    root = _parse(to_svg(graph, detail="collapsed", engine=engine))
    clusters = {texts[0] for texts in _groups(root, "cluster").values()}
    assert {"layers", "layers.0", "layers.0.self_attn", "layers.1"} <= clusters
    assert not any(name.startswith("layers.2") for name in clusters)
    nodes = _groups(root, "node")
    [box] = [texts for title, texts in nodes.items() if title.startswith("b")]
    assert box[:2] == [
        "layers.2 … layers.5: 4 × TransformerEncoderLayer",
        "same as layers.1, drawn in full",
    ]
    shown = {texts[0] for texts in nodes.values()}
    assert "layers.0.self_attn.in_proj_weight" in shown
    assert "layers.3.linear1.weight" not in shown


@pytest.mark.parametrize("engine", ENGINES)
def test_truncated_graph_note_is_visible(engine: Path) -> None:
    x = torch.ones(2, requires_grad=True)
    y = x
    for _ in range(6):
        y = y * 2
    root = _parse(to_svg(gradprobe.trace(y.sum(), max_nodes=3), engine=engine))
    notes = _groups(root, "node")["notes"]
    assert notes[0].startswith("⚠ truncated at max_nodes=3")


def test_save_svg_writes_the_file(tmp_path: Path) -> None:
    target = tmp_path / "graph.svg"
    returned = save_svg(_mul_graph(), str(target))
    assert returned == target
    assert "n1" in _groups(_parse(target.read_text(encoding="utf-8")), "node")
    with pytest.raises(GradprobeTypeError, match="file path"):
        save_svg(_mul_graph(), 42)  # type: ignore[arg-type]


def test_graph_repr_svg_is_the_default_rendering() -> None:
    graph = _mul_graph()
    assert set(_groups(_parse(graph._repr_svg_()), "node")) == {"n0", "n1", "n2", "r0"}


@settings(max_examples=15)
@given(random_graphs())
def test_random_graphs_render_to_valid_svg(built: object) -> None:
    graph = gradprobe.trace(*built.args)  # type: ignore[attr-defined]
    root = _parse(to_svg(graph))
    titles = set(_groups(root, "node"))
    assert {f"n{node.id}" for node in graph.nodes} <= titles


# -- engine discovery -----------------------------------------------------------------------------


def _hide_system_dot(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An empty PATH: no system dot, and the venv's bin/ is not on PATH either."""
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert shutil.which("dot") is None


def test_falls_back_to_graphviz_pure_without_dot_on_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _hide_system_dot(monkeypatch, tmp_path)
    engine = find_engine()
    assert engine.source == "graphviz-pure"
    assert engine.path.name.startswith("graphviz-pure")
    assert set(_groups(_parse(to_svg(_mul_graph())), "node")) == {"n0", "n1", "n2", "r0"}


def test_graphviz_pure_found_through_its_distribution_record(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Not on PATH and not in any scripts directory: only the wheel's RECORD knows.
    _hide_system_dot(monkeypatch, tmp_path)
    monkeypatch.setattr(sysconfig, "get_path", lambda *a, **k: str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    engine = find_engine()
    assert engine.source == "graphviz-pure" and engine.path.is_file()


def test_no_engine_names_both_fixes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(render_svg, "_system_dot", lambda: None)
    monkeypatch.setattr(render_svg, "_graphviz_pure", lambda: None)
    with pytest.raises(GraphvizNotFoundError) as info:
        to_svg(_mul_graph())
    message = str(info.value)
    for fix in (
        "pip install graphviz-pure",
        "apt-get install graphviz",
        "brew install graphviz",
        "conda install graphviz",
        "GRADPROBE_DOT",
    ):
        assert fix in message
    assert isinstance(info.value, RenderError)


def test_environment_variable_picks_the_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    pure = render_svg._graphviz_pure()
    assert pure is not None
    monkeypatch.setenv(render_svg.ENGINE_ENV, str(pure))
    assert find_engine() == render_svg.Engine(pure, "environment")
    monkeypatch.setenv(render_svg.ENGINE_ENV, "/no/such/dot")
    with pytest.raises(GraphvizNotFoundError, match=r"'/no/such/dot' given by the GRADPROBE_DOT"):
        find_engine()
    # The keyword wins over the environment.
    assert find_engine(pure) == render_svg.Engine(pure, "argument")


def test_engine_keyword_accepts_commands_and_rejects_junk() -> None:
    with pytest.raises(GraphvizNotFoundError, match="'no-such-engine-xyz' given by engine="):
        find_engine("no-such-engine-xyz")
    with pytest.raises(GradprobeTypeError, match="engine="):
        find_engine(3)  # type: ignore[arg-type]
    with pytest.raises(GradprobeValueError, match="timeout"):
        to_svg(_mul_graph(), timeout=0)


def _script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "fake-dot"
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@posix_only
def test_engine_failure_reports_its_stderr(tmp_path: Path) -> None:
    engine = _script(tmp_path, "echo 'syntax error in line 3' >&2; exit 2")
    with pytest.raises(RenderError, match="exit status 2") as info:
        to_svg(_mul_graph(), engine=engine)
    assert "syntax error in line 3" in str(info.value)
    assert str(engine) in str(info.value)


@posix_only
def test_engine_timeout_is_a_render_error(tmp_path: Path) -> None:
    engine = _script(tmp_path, "while :; do :; done")  # shell builtins only: no PATH needed
    with pytest.raises(RenderError, match=r"timeout=0\.3 s"):
        to_svg(_mul_graph(), engine=engine, timeout=0.3)


@posix_only
def test_unrunnable_engine_is_a_render_error(tmp_path: Path) -> None:
    engine = tmp_path / "not-a-program"
    engine.write_bytes(b"\x7fELF garbage")
    engine.chmod(0o755)
    with pytest.raises(RenderError, match="Could not run the Graphviz engine"):
        to_svg(_mul_graph(), engine=engine)
