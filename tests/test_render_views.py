"""Readable pictures of big graphs: module views (``depth=``), collapsed repeats, folded
view ops, op runs, and the size guard of ``to_svg`` (issue 16, item 3).

The models are real: a ResNet-50-shaped net (Bottleneck blocks ×[3, 4, 6, 3], torchvision
parameter names, from ``benchmarks/models.py``) and a 24-layer ``nn.TransformerEncoder``,
random weights. Boxes are counted in the DOT text and in the SVG a real Graphviz engine
lays out; nothing is mocked.
"""

from __future__ import annotations

import dataclasses
import itertools
import pickle
import re
from pathlib import Path

import pytest
import torch
from benchmarks import models
from hypothesis import given
from hypothesis import strategies as st
from torch import nn

import gradprobe
from gradprobe._layout import AUTO_BUDGET, build_view, is_view_op
from gradprobe._layout.runs import MAX_PERIOD, MIN_REPEATS, repeats
from gradprobe.errors import GradprobeValueError, RenderError
from gradprobe.graph import Graph
from gradprobe.render import svg as render_svg
from gradprobe.render import to_dot, to_svg
from gradprobe.render.dot import _amount
from test_layout import _boxes, _check_view, _named_graphs
from test_render_dot import _check_well_formed, _label_texts
from test_render_svg import ENGINES, _groups, _parse, posix_only

# Everything a picture lays out: nodes, boxes, outputs and the note.
_DRAWN = re.compile(r"^\s*(?:[nbr]\d+|notes) \[", re.MULTILINE)
_KEY = re.compile(r"^\s*([nbr]\d+) \[", re.MULTILINE)


def _drawn(dot: str) -> int:
    return len(_DRAWN.findall(dot))


def _svg_boxes(svg: str) -> int:
    return len(_groups(_parse(svg), "node"))


def _engine() -> Path:
    engine = render_svg._graphviz_pure() or render_svg._system_dot()
    assert engine is not None
    return engine


@pytest.fixture(scope="module")
def resnet50() -> tuple[nn.Module, Graph]:
    model = models.resnet50_like()
    out = model(models.example_input("resnet50_like", batch=2, size=64))
    return model, gradprobe.trace(out.sum(), model=model)


@pytest.fixture(scope="module")
def transformer() -> tuple[nn.Module, Graph]:
    model = models.transformer_encoder(24, d_model=64, nhead=4)
    out = model(torch.randn(2, 8, 64))
    return model, gradprobe.trace(out.sum(), model=model)


def _parameters(model: nn.Module, prefix: str) -> int:
    return sum(p.numel() for name, p in model.named_parameters() if name.startswith(prefix + "."))


# -- module types are captured ---------------------------------------------------------------


def test_trace_records_each_submodule_class(resnet50: tuple[nn.Module, Graph]) -> None:
    model, graph = resnet50
    assert graph.module_types["layer1.0"] == "Bottleneck"
    assert graph.module_types["layer2.0.downsample"] == "Sequential"
    assert graph.module_types["fc"] == "Linear"
    assert set(graph.module_types) == {name for name, _ in model.named_modules() if name}
    assert graph.to_dict()["module_types"]["layer4.2.bn3"] == "BatchNorm2d"
    assert pickle.loads(pickle.dumps(graph)) == graph
    x = torch.ones(2, requires_grad=True)
    assert dict(gradprobe.trace((x * 2).sum()).module_types) == {}


# -- the default view of big models ----------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_default_resnet50_draws_at_most_100_boxes(
    resnet50: tuple[nn.Module, Graph], engine: Path
) -> None:
    _, graph = resnet50
    dot = to_dot(graph)
    _check_well_formed(dot)
    assert len(graph) > 300
    assert _drawn(dot) <= AUTO_BUDGET
    assert _svg_boxes(to_svg(graph, engine=engine)) == _drawn(dot)
    texts = "\n".join(_label_texts(dot))
    # The first block of each structure is drawn in full; later ones point at it.
    assert "layer1.0.downsample.0.weight" in texts and "layer1.1.conv3.weight" in texts
    assert "layer2.1 … layer2.3: 3 × Bottleneck\nsame as layer1.1, drawn in full" in texts
    assert "layer3.1 … layer3.5: 5 × Bottleneck\nsame as layer1.1" in texts
    assert "layer4.0: Bottleneck\nsame as layer1.0, drawn in full" in texts
    assert "layer3.2.conv1.weight" not in texts


@pytest.mark.parametrize("engine", ENGINES)
def test_default_24_layer_transformer_draws_at_most_100_boxes(
    transformer: tuple[nn.Module, Graph], engine: Path
) -> None:
    _, graph = transformer
    dot = to_dot(graph)
    _check_well_formed(dot)
    assert len(graph) > 1000
    assert _drawn(dot) <= AUTO_BUDGET
    assert _svg_boxes(to_svg(graph, engine=engine)) == _drawn(dot)
    labels = _label_texts(dot)
    texts = "\n".join(labels)
    assert "layers.2 … layers.23: 22 × TransformerEncoderLayer\nsame as layers.1" in texts
    # Attention's wall of views is gone: folded into the ops that read them.
    heads = {label.split("\n")[0] for label in labels}
    assert not heads & {"View", "Transpose", "T", "UnsafeView", "Permute", "Unsqueeze"}
    assert any(re.search(r"^via (View|Transpose)", line, re.MULTILINE) for line in labels)


def test_folded_ops_are_drawn_as_their_reader(transformer: tuple[nn.Module, Graph]) -> None:
    _, graph = transformer
    view = build_view(graph)
    assert view.folded
    for reader, folded in view.folded.items():
        assert view.keys[reader] == f"n{reader}"
        for node_id in folded:
            node = graph.nodes[node_id]
            assert is_view_op(node), node.name
            assert view.keys[node_id] == view.keys[reader]
            # it had one reader: the one it is drawn in, or a view folded into it
            (src,) = {edge.src for edge in graph.parents(node_id)}
            assert src == reader or src in folded
    # An op with two readers (the packed q/k/v projection) stays.
    kept = [n for n in graph.nodes if is_view_op(n) and view.keys[n.id] == f"n{n.id}"]
    assert all(len({e.src for e in graph.parents(n.id)}) != 1 for n in kept)


# -- depth: the module view --------------------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_depth_1_boxes_each_top_level_module(
    resnet50: tuple[nn.Module, Graph], engine: Path
) -> None:
    model, graph = resnet50
    dot = to_dot(graph, depth=1)
    _check_well_formed(dot)
    labels = {label.split("\n")[0]: label for label in _label_texts(dot)}
    for name, child in model.named_children():
        if next(child.parameters(), None) is None:
            continue  # relu, maxpool, avgpool: no parameters, drawn as their ops
        label = labels[f"{name}: {type(child).__name__}"]
        assert f"{_amount(_parameters(model, name))} parameters" in label, label
    # ops between the modules stay ops; the boxes are wired to their inputs and outputs
    assert {"MaxPool2DWithIndices", "Sum"} <= set(labels)
    keys = {label.split("\n")[0]: key for key, label in _keyed_labels(dot).items()}
    edges = set(re.findall(r"^\s*(\w+) -> (\w+)", dot, re.MULTILINE))
    chain = ["layer1: Sequential", "layer2: Sequential", "layer3: Sequential", "layer4: Sequential"]
    for a, b in itertools.pairwise(chain):
        assert (keys[a], keys[b]) in edges
    assert (keys["MaxPool2DWithIndices"], keys["layer1: Sequential"]) in edges
    assert _drawn(dot) < 20
    assert _svg_boxes(to_svg(graph, depth=1, engine=engine)) == _drawn(dot)


def _keyed_labels(dot: str) -> dict[str, str]:
    out = {}
    for line in dot.splitlines():
        match = _KEY.match(line)
        if match:
            out[match[1]] = _label_texts(line)[0]
    return out


def test_depth_2_collapses_repeated_blocks(resnet50: tuple[nn.Module, Graph]) -> None:
    model, graph = resnet50
    texts = "\n".join(_label_texts(to_dot(graph, depth=2)))
    stages = {"layer1": 3, "layer2": 4, "layer3": 6, "layer4": 3}
    for stage, blocks in stages.items():
        head = f"{stage}.0 … {stage}.{blocks - 1}: {blocks} × Bottleneck"
        assert f"{head}\n" in texts
        assert f"{_amount(_parameters(model, stage))} parameters in all" in texts
    # detail="full" keeps every block its own box.
    full = "\n".join(_label_texts(to_dot(graph, depth=2, detail="full")))
    assert "×" not in full
    assert all(f"{stage}.{i}: Bottleneck" in full for stage, n in stages.items() for i in range(n))


def test_depth_merges_transformer_layers(transformer: tuple[nn.Module, Graph]) -> None:
    _, graph = transformer
    dot = to_dot(graph, depth=2)
    assert "layers.0 … layers.23: 24 × TransformerEncoderLayer" in "\n".join(_label_texts(dot))
    assert _drawn(dot) <= 5


@pytest.mark.parametrize("name", ["resnet50", "transformer"])
def test_everything_is_reachable_through_depth_and_detail(
    name: str, request: pytest.FixtureRequest
) -> None:
    model, graph = request.getfixturevalue(name)
    full = to_dot(graph, detail="full")
    assert {int(k[1:]) for k in _KEY.findall(full) if k[0] == "n"} == set(range(len(graph)))
    # Every module with parameters is a box of its own at its depth.
    named = {
        name for name, m in model.named_modules() if name and next(m.parameters(), None) is not None
    }
    deepest = max(name.count(".") + 1 for name in named)
    seen: set[str] = set()
    drawn_before = 0
    for depth in range(1, deepest + 1):
        view = build_view(graph, "full", depth=depth)
        _check_view(graph, view)
        seen.update(box.first for box in _boxes(view.top))
        assert view.items >= drawn_before  # deeper shows more
        drawn_before = view.items
    assert seen == named


# -- op runs, and graphs without module names ------------------------------------------------


def _chain(steps: int) -> torch.Tensor:
    x = torch.ones(3, requires_grad=True)
    y = x
    for _ in range(steps):
        y = y * 1.0001 + 0.1
    return y.sum()


def test_a_repeating_chain_is_drawn_once_then_boxed() -> None:
    graph = gradprobe.trace(_chain(500))
    view = build_view(graph)
    _check_view(graph, view)
    [box] = _boxes(view.top)
    # The first Mul reads the leaf x, the others the Add before: the run starts after it.
    assert (box.kind, box.first, box.count, box.nodes) == ("run", "Add → Mul", 498, 996)
    dot = to_dot(graph)
    assert "498 × Add → Mul" in "\n".join(_label_texts(dot))
    assert _drawn(dot) < 10


def test_an_unrolled_rnn_without_names_collapses_to_one_step() -> None:
    torch.manual_seed(0)
    cell = nn.RNNCell(4, 8)
    h = torch.zeros(1, 8)
    inputs = [torch.randn(1, 4, requires_grad=True) for _ in range(40)]
    for x in inputs:
        h = cell(x, h)
    graph = gradprobe.trace(h.sum())  # no model=: no module names at all
    view = build_view(graph)
    _check_view(graph, view)
    runs = [box for box in _boxes(view.top) if box.kind == "run"]
    assert len(runs) == 1 and runs[0].count >= 30
    # the inputs of the hidden steps (leaves read only there) are inside the box too
    hidden_inputs = sum(
        1 for n in graph.nodes if n.leaf is not None and view.keys[n.id] == runs[0].key
    )
    assert hidden_inputs >= 30
    assert view.items + len(graph.roots) + 1 <= AUTO_BUDGET


@given(st.lists(st.sampled_from("abc"), max_size=60))
def test_repeats_are_real_and_disjoint(items: list[str]) -> None:
    end = 0
    for found in repeats(items):
        assert found.start >= end and 1 <= found.period <= MAX_PERIOD
        assert found.times >= MIN_REPEATS
        pattern = items[found.start : found.start + found.period]
        span = items[found.start : found.start + found.period * found.times]
        assert span == pattern * found.times
        end = found.start + found.period * found.times


@given(
    _named_graphs(),
    st.sampled_from(["auto", "full", "collapsed"]),
    st.one_of(st.none(), st.integers(1, 4)),
    st.integers(1, 40),
)
def test_any_graph_gets_a_consistent_view_at_any_depth(
    graph: Graph, detail: str, depth: int | None, budget: int
) -> None:
    view = build_view(graph, detail, depth=depth, budget=budget, max_boxes=budget)  # type: ignore[arg-type]
    _check_view(graph, view)
    if detail == "auto":
        assert view.items + len(graph.roots) + 1 <= max(budget, len(graph.roots) + 2)
    dot = to_dot(graph, detail=detail, depth=depth)  # type: ignore[arg-type]
    _check_well_formed(dot)


# -- the size guard ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chain_200k() -> Graph:
    return gradprobe.trace(_chain(100_000))


@pytest.mark.slow
@posix_only
def test_a_200k_node_chain_renders_by_default_and_full_stops_early(
    chain_200k: Graph, tmp_path: Path
) -> None:
    graph = chain_200k
    assert len(graph) > 200_000
    svg = to_svg(graph, engine=_engine())
    assert 3 < _svg_boxes(svg) < 10
    # detail="full" would take minutes and fail: refused before Graphviz is started.
    marker = tmp_path / "engine-ran"
    engine = tmp_path / "engine.sh"
    engine.write_text(f"#!/bin/sh\ntouch {marker}\ncat >/dev/null\n")
    engine.chmod(0o755)
    with pytest.raises(RenderError) as info:
        to_svg(graph, detail="full", engine=engine)
    assert not marker.exists()
    message = str(info.value)
    assert "detail='full'" in message and f"{len(graph) + 1:,} boxes" in message
    # The advice works: the default view, and a trace of fewer nodes drawn in full.
    auto = int(re.search(r"\(detail='auto'\) draws ([\d,]+) boxes", message)[1])  # type: ignore[index]
    assert auto == _svg_boxes(svg)
    nodes = int(re.search(r"max_nodes=(\d+)", message)[1])  # type: ignore[index]
    y = _chain(100_000)
    cut = gradprobe.trace(y, max_nodes=nodes)
    assert _svg_boxes(to_svg(cut, detail="full", engine=_engine())) > nodes


def test_the_advice_of_the_guard_works_for_a_model(resnet50: tuple[nn.Module, Graph]) -> None:
    _, graph = resnet50
    with pytest.raises(RenderError, match=r"more than max_boxes=100") as info:
        to_svg(graph, detail="full", max_boxes=100, engine=_engine())
    message = str(info.value)
    top = int(re.search(r"depth=1 draws ([\d,]+), one box per top-level module", message)[1])  # type: ignore[index]
    assert _svg_boxes(to_svg(graph, depth=1, max_boxes=100, engine=_engine())) == top
    anyway = int(re.search(r"max_boxes=(\d+) lays it out anyway", message)[1])  # type: ignore[index]
    svg = to_svg(graph, detail="full", max_boxes=anyway, engine=_engine())
    assert _svg_boxes(svg) == anyway == len(graph) + 1  # every node, and the output


def test_auto_keeps_the_boxes_nearest_the_outputs_under_max_boxes() -> None:
    model = models.resnet18_like()
    out = model(models.example_input("resnet18_like", batch=2, size=32))
    graph = gradprobe.trace(out.sum())  # no names: nothing to group
    view = build_view(graph, max_boxes=40)
    _check_view(graph, view)
    [rest] = [box for box in _boxes(view.top) if box.kind == "rest"]
    assert view.items + len(graph.roots) + 1 <= 40
    drawn = sorted(int(key[1:]) for key in set(view.keys) if key.startswith("n"))
    assert drawn and max(drawn) < min(i for i, key in enumerate(view.keys) if key == rest.key)
    dot = to_dot(graph, max_boxes=40)
    _check_well_formed(dot)
    note = " ".join(_label_texts(dot)).replace("\n", " ")
    assert "nodes farthest from the outputs are not drawn" in note
    assert _drawn(dot) <= 40


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"depth": 0}, ["depth=0", "positive int"]),
        ({"depth": True}, ["depth=True"]),
        ({"depth": "1"}, ["depth='1'"]),
        ({"max_boxes": 0}, ["max_boxes=0", "positive int"]),
        ({"max_boxes": 2.5}, ["max_boxes=2.5"]),
    ],
)
def test_bad_depth_and_max_boxes_are_named(kwargs: dict[str, object], words: list[str]) -> None:
    x = torch.ones(2, requires_grad=True)
    graph = gradprobe.trace((x * 2).sum())
    for draw in (to_dot, to_svg):
        with pytest.raises(GradprobeValueError) as info:
            draw(graph, **kwargs)  # type: ignore[operator]
        assert all(word in str(info.value) for word in words)


def test_views_are_deterministic() -> None:
    texts = []
    for _ in range(2):
        model = models.transformer_encoder(4, d_model=16, nhead=2)
        graph = gradprobe.trace(model(torch.randn(2, 5, 16)).sum(), model=model)
        texts.append([to_dot(graph), to_dot(graph, depth=2), to_dot(graph, detail="collapsed")])
    assert texts[0] == texts[1]


def test_a_graph_without_names_says_depth_needs_them() -> None:
    x = torch.ones(2, requires_grad=True)
    graph = gradprobe.trace((x * 2).sum())
    texts = " ".join(_label_texts(to_dot(graph, depth=1))).replace("\n", " ")
    assert "pass model= to gradprobe.trace()" in texts
    view = build_view(graph, depth=1)
    assert dataclasses.replace(view, steps=()) == dataclasses.replace(
        build_view(graph), steps=(), depth=1
    )


# -- labels fit, in a real browser --------------------------------------------------------------

_chromium = pytest.importorskip("_chromium")


@pytest.mark.skipif(_chromium.chromium() is None, reason="no system Chromium")
@pytest.mark.skipif(render_svg._graphviz_pure() is None, reason="no graphviz-pure")
@pytest.mark.parametrize("setup", _chromium.FONT_SETUPS)
def test_box_labels_fit_in_a_browser(
    resnet50: tuple[nn.Module, Graph], transformer: tuple[nn.Module, Graph], setup: str
) -> None:
    if not _chromium.fonts_for(setup):
        pytest.skip(f"no fonts for {setup}")
    engine = render_svg._graphviz_pure()
    svgs = [
        to_svg(resnet50[1], engine=engine),
        to_svg(resnet50[1], depth=2, engine=engine),
        to_svg(transformer[1], engine=engine),
        to_svg(gradprobe.trace(_chain(50)), engine=engine),
    ]
    rows = _chromium.measure(svgs, setup)
    assert {row.svg for row in rows} == {0, 1, 2, 3}
    assert any(row.group.startswith("b") for row in rows)  # the boxes were measured
    assert [row for row in rows if row.over > 0.5] == []
