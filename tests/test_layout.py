"""Module inference and the full/collapsed views (gradprobe._layout), on real traces."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest
import torch
from benchmarks import models
from hypothesis import given
from hypothesis import strategies as st
from torch import nn

import gradprobe
from gradprobe._layout import AUTO_BUDGET, Box, Cluster, View, build_view, infer_modules
from gradprobe._layout.tree import Planner
from gradprobe.graph import Graph
from strategies import random_graphs


def _traced(model: nn.Module, x: torch.Tensor) -> Graph:
    return gradprobe.trace(model(x).sum(), model=model)


def _transformer(layers: int) -> tuple[nn.Module, Graph]:
    model = models.transformer_encoder(layers, d_model=16, nhead=2)
    return model, _traced(model, torch.randn(2, 5, 16))


@pytest.fixture(scope="module")
def resnet18_graph() -> Graph:
    model = models.resnet18_like()
    return _traced(model, models.example_input("resnet18_like", batch=2, size=32))


def _by_module(graph: Graph, modules: tuple[str | None, ...]) -> dict[str, Counter[str]]:
    out: dict[str, Counter[str]] = {}
    for node in graph.nodes:
        if node.leaf is None:
            out.setdefault(modules[node.id] or "", Counter())[node.label] += 1
    return out


def _boxes(cluster: Cluster) -> list[Box]:
    found = list(cluster.boxes)
    for child in cluster.children:
        found.extend(_boxes(child))
    return found


def _clusters(cluster: Cluster) -> list[str]:
    found = [cluster.module]
    for child in cluster.children:
        found.extend(_clusters(child))
    return found


def _drawn_nodes(cluster: Cluster) -> list[int]:
    found = list(cluster.nodes)
    for child in cluster.children:
        found.extend(_drawn_nodes(child))
    return found


# -- module inference -------------------------------------------------------------------------


def test_linear_uses_its_weight_through_t() -> None:
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    graph = _traced(net, torch.ones(1, 3))
    modules = infer_modules(graph)
    assert modules is not None
    placed = {(node.label, modules[node.id]) for node in graph.nodes}
    assert ("T", "0") in placed  # the view of 0.weight belongs to layer 0 ...
    assert ("0.weight", "0") in placed
    assert ("Addmm", "0") in placed and ("Addmm", "2") in placed
    assert ("Relu", "") in placed  # ... the activation between layers to the top level
    assert ("Sum", "") in placed


def test_without_parameter_names_nothing_is_placed() -> None:
    w = torch.ones(3, requires_grad=True)
    graph = gradprobe.trace((w * 2).relu().sum(), names={"w": w})
    assert infer_modules(graph) is None
    view = build_view(graph, "collapsed")
    assert view.top.children == () and view.hidden == 0
    assert sorted(view.top.nodes) == list(range(len(graph)))


def test_resnet_blocks_own_their_activation_and_residual_add(resnet18_graph: Graph) -> None:
    modules = infer_modules(resnet18_graph)
    assert modules is not None
    ops = _by_module(resnet18_graph, modules)
    # Every block but the last: relu between bn1 and conv2, then add + relu at the end,
    # which the fan-out to the next block (conv1 and the skip) marks as this block's.
    for block in ("layer1.0", "layer1.1", "layer2.0", "layer3.1", "layer4.0"):
        assert ops[block]["Relu"] == 2, block
        assert ops[block]["Add"] == 1, block
    assert ops["layer2.0.downsample.0"]["Convolution"] == 1
    assert ops["layer1.0.conv1"]["Convolution"] == 1
    # The stem's relu + maxpool run before layer1 and at the top level.
    assert ops[""]["MaxPool2DWithIndices"] == 1
    assert ops[""]["Sum"] == 1


def test_transformer_attention_and_post_norm_residual() -> None:
    _, graph = _transformer(2)
    modules = infer_modules(graph)
    assert modules is not None
    ops = _by_module(graph, modules)
    for layer in ("layers.0", "layers.1"):
        attn = ops[f"{layer}.self_attn"]
        assert attn["ScaledDotProductFlashAttentionForCpu"] == 1
        assert attn["Select"] == 3  # q, k, v out of the packed projection
        assert ops[f"{layer}.norm1"]["NativeLayerNorm"] == 1
        assert ops[layer]["Relu"] == 1
    # layers.1 reads layers.0's output twice (attention and the skip): both residual adds
    # are in layers.1 itself, not in its self_attn.
    assert ops["layers.1"]["Add"] == 2


def test_inference_is_deterministic_across_traces() -> None:
    _, first = _transformer(3)
    _, second = _transformer(3)
    assert infer_modules(first) == infer_modules(second)
    assert build_view(first, "collapsed") == build_view(second, "collapsed")


@st.composite
def _named_graphs(draw: st.DrawFn) -> Graph:
    """Random traced graphs whose leaves get random dotted parameter names."""
    built = draw(random_graphs())
    graph = gradprobe.trace(*built.args)
    parts = st.sampled_from(["a", "b", "0", "1", "conv", "layers"])
    nodes = []
    for node in graph.nodes:
        if node.leaf is not None and draw(st.booleans()):
            path = draw(st.lists(parts, min_size=1, max_size=4))
            leaf = dataclasses.replace(node.leaf, name=".".join([*path, "w"]), kind="parameter")
            node = dataclasses.replace(node, leaf=leaf)
        nodes.append(node)
    return dataclasses.replace(graph, nodes=tuple(nodes))


def _check_view(graph: Graph, view: View) -> None:
    drawn = _drawn_nodes(view.top)
    assert len(drawn) == len(set(drawn)) == len(graph) - view.hidden
    keys = {f"n{i}" for i in drawn} | {box.key for box in _boxes(view.top)}
    assert set(view.keys) <= keys
    for edge in view.edges:
        assert edge.src in keys and edge.dst in keys and edge.src != edge.dst
    assert sum(edge.count for edge in view.edges) <= len(graph.edges)


@given(_named_graphs(), st.sampled_from(["full", "collapsed"]), st.integers(1, 40))
def test_any_named_graph_gets_a_consistent_view(graph: Graph, detail: str, budget: int) -> None:
    modules = infer_modules(graph)
    if not graph.parameters:
        assert modules is None
        return
    assert modules is not None and len(modules) == len(graph)
    for node in graph.nodes:
        leaf = node.leaf
        if leaf is not None and leaf.kind == "parameter" and leaf.name:
            assert modules[node.id] == leaf.name.rpartition(".")[0]
    view = build_view(graph, detail, budget=budget)  # type: ignore[arg-type]
    _check_view(graph, view)
    if detail == "full":
        assert view.hidden == 0


# -- views --------------------------------------------------------------------------------------


def test_full_view_draws_every_node_in_module_clusters(resnet18_graph: Graph) -> None:
    view = build_view(resnet18_graph, "full")
    _check_view(resnet18_graph, view)
    assert view.hidden == 0 and view.items == len(resnet18_graph)
    clusters = _clusters(view.top)
    assert {"layer1", "layer1.0", "layer2.0.downsample", "layer4.1"} <= set(clusters)
    assert "layer1.0.conv1" not in clusters  # leaf modules sit inside their container


def test_auto_is_full_for_small_graphs_and_collapsed_for_large() -> None:
    _, small = _transformer(1)
    _, large = _transformer(6)
    assert len(small) + len(small.roots) + 1 <= AUTO_BUDGET < len(large)
    assert build_view(small).detail == "full"
    assert build_view(large).detail == "collapsed"


def test_repeated_transformer_layers_collapse_to_one_box() -> None:
    _, graph = _transformer(6)
    view = build_view(graph, "collapsed")
    _check_view(graph, view)
    # layers.0 differs (its input needs no grad); layers.1..5 are identical.
    [box] = _boxes(view.top)
    assert (box.kind, box.first, box.last, box.like, box.count) == (
        "repeat",
        "layers.2",
        "layers.5",
        "layers.1",
        4,
    )
    modules = view.modules
    assert modules is not None
    for node in graph.nodes:
        module = modules[node.id]
        hidden = any(module.startswith(f"layers.{i}") for i in range(2, 6))
        assert (view.keys[node.id] == box.key) == hidden, (node, module)
    # Each collapsed block has as many nodes as the one drawn in full.
    shown = sum(1 for node in graph.nodes if (modules[node.id] + ".").startswith("layers.1."))
    assert box.nodes == 4 * shown
    folded = sum(len(ids) for ids in view.folded.values())
    assert folded > 0 and view.hidden == box.nodes + folded


def _resnet_deep_graph() -> Graph:
    model = models.resnet_deep(16)  # 4 blocks per stage
    return _traced(model, models.example_input("resnet_deep", batch=2, size=32))


def test_deep_resnet_keeps_one_block_per_run() -> None:
    graph = _resnet_deep_graph()
    modules = infer_modules(graph)
    planner = Planner(graph, modules, graph.module_types)
    planner.collapse_repeats()
    view = planner.view("collapsed", modules)
    _check_view(graph, view)
    boxes = {box.first: box for box in _boxes(view.top)}
    # layer1.0 has no downsample, so all four layer1 blocks match. layer2 and layer3 have
    # one structure (a downsampling block, three plain ones; their shapes do not count):
    # layer3 is boxed whole. The last block differs (its trailing ops are the head's).
    assert (boxes["layer1.1"].count, boxes["layer1.1"].like) == (3, "layer1.0")
    assert (boxes["layer2.2"].count, boxes["layer2.2"].like) == (2, "layer2.1")
    assert (boxes["layer3"].count, boxes["layer3"].like) == (1, "layer2")
    assert (boxes["layer4.2"].count, boxes["layer4.2"].like) == (1, "layer4.1")
    assert len(boxes) == 4
    assert boxes["layer1.1"].nodes == 3 * 13 and boxes["layer1.1"].type == "BasicBlock"
    assert view.hidden == sum(box.nodes for box in boxes.values())
    assert view.items == len(graph) - view.hidden + len(boxes)


def test_collapsed_boxes_blocks_like_any_block_drawn_before() -> None:
    graph = _resnet_deep_graph()
    view = build_view(graph, "collapsed")
    _check_view(graph, view)
    boxes = {box.first: box for box in _boxes(view.top)}
    # Plain blocks of every stage point at layer1.0, downsampling ones at layer2.0; a run
    # of repeats joins the block that opens it (layer2.1 … layer2.3, not just 2.2 … 2.3).
    assert (boxes["layer2.1"].last, boxes["layer2.1"].count) == ("layer2.3", 3)
    assert boxes["layer2.1"].like == "layer1.0"
    assert boxes["layer4.0"].like == "layer2.0"
    assert (boxes["layer4.1"].last, boxes["layer4.1"].like) == ("layer4.2", "layer1.0")
    assert "layer4.3" not in boxes  # different: drawn in full
    drawn = {view.modules[n] for n in _drawn_nodes(view.top) if view.modules is not None}
    assert {"layer1.0.conv1", "layer2.0.downsample.0", "layer4.3.bn2"} <= drawn
    folded = sum(len(ids) for ids in view.folded.values())
    assert view.hidden == sum(box.nodes for box in boxes.values()) + folded


def test_budget_boxes_whole_modules(resnet18_graph: Graph) -> None:
    view = build_view(resnet18_graph, "collapsed", budget=30)
    _check_view(resnet18_graph, view)
    assert view.items <= 30
    kinds = Counter(box.kind for box in _boxes(view.top))
    assert kinds["module"] >= 1
    # Edges between boxes stand for several graph edges and are drawn once.
    assert any(edge.count > 1 for edge in view.edges)


def test_unnamed_leaves_follow_their_reader_and_inputs_stay_on_top() -> None:
    layer = nn.Linear(2, 2)
    x = torch.ones(1, 2, requires_grad=True)
    scale = torch.ones(2, requires_grad=True)
    graph = gradprobe.trace((layer(x) * scale).sum(), model=layer, names={"x": x})
    modules = infer_modules(graph)
    assert modules is not None
    for node in graph.nodes:
        if node.leaf is not None and node.leaf.kind in ("input", "tensor"):
            assert modules[node.id] == ""
    assert {leaf.kind for leaf in graph.leaves} == {"parameter", "input", "tensor"}


def test_only_one_view_links_an_op_to_a_parameter() -> None:
    inner = nn.Module()
    w = nn.Parameter(torch.ones(2, 2))
    inner.register_parameter("w", w)
    holder = nn.Module()
    holder.add_module("inner", inner)
    x = torch.ones(2, 2, requires_grad=True)
    graph = gradprobe.trace((x @ w.t()).sum(), (x * w.t().t()).sum(), model=holder)
    modules = infer_modules(graph)
    assert modules is not None
    [mm] = graph.find("MmBackward0")
    [mul] = graph.find("MulBackward0")
    assert modules[mm.id] == "inner"  # x @ w.t(): one view, so mm is inner's
    assert modules[mul.id] == ""  # two views away: placed by time, after the last anchor
