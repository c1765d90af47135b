"""DOT text (gradprobe.render.dot): golden output, determinism, escaping, what is drawn."""

from __future__ import annotations

import dataclasses
import html
import re
from typing import Any

import pytest
import torch
from benchmarks import models
from torch import nn

import gradprobe
from gradprobe.errors import GradprobeTypeError, GradprobeValueError
from gradprobe.graph import Edge, Graph
from gradprobe.render import to_dot
from gradprobe.render.dot import html_text

GOLDEN_MUL = """\
digraph gradprobe {
  graph [rankdir="TB", fontname="DejaVu Sans", fontsize="10", nodesep="0.25", ranksep="0.3", newrank="true", labeljust="l"]
  node [shape="box", style="rounded,filled", fontname="DejaVu Sans", fontsize="10", margin="0.1,0.04", height="0.3", penwidth="0.8"]
  edge [arrowsize="0.6", color="#666666"]
  n2 [label=<<B>w</B><BR/><FONT POINT-SIZE="8">(3,) float32</FONT><BR/><FONT POINT-SIZE="8" COLOR="#666666">grad not computed yet</FONT>>, fillcolor="#e8f5e9"]
  n1 [label=<<B>Mul</B><BR/><FONT POINT-SIZE="8">other: w (3,) float32 v0</FONT><BR/><FONT POINT-SIZE="8">self: w (3,) float32 v0</FONT>>, fillcolor="#f2f2f2"]
  n0 [label=<<B>Sum</B>>, fillcolor="#f2f2f2"]
  r0 [label=<<B>output</B><BR/><FONT POINT-SIZE="8">scalar float32</FONT>>, shape="oval", style="filled,bold", fillcolor="#fff9c4"]
  n0 -> r0 [style="bold"]
  n1 -> n0
  n2 -> n1 [minlen="0", penwidth="1.5"]
}
"""

EVIL = [
    "<script>alert(1)</script>",
    'a"b',
    "x\\ny",
    "{",
    "&amp;",
    "\\N\\G\\L",
    "]; evil [shape=box",
    "}\ndigraph x {",
    "tab\there\x00nul",
    "</FONT></B><BR/>",
]

_STATEMENT = re.compile(
    r"^\s*(?:[nbr]\d+|notes) \[label=<(?P<label>.*)>(?P<rest>(?:, \w+=\"[^\"]*\")*)\]$"
)
_CLUSTER_LABEL = re.compile(r"^\s*graph \[label=<(?P<label>.*)>(?P<rest>(?:, \w+=\"[^\"]*\")*)\]$")
_EDGE = re.compile(r'^\s*[nbr]\d+ -> [nbr]\d+(?: \[\w+="[^"]*"(?:, \w+="[^"]*")*\])?$')
_TAGS = re.compile(r'<(?:B|/B|BR/|/FONT|FONT(?: POINT-SIZE="\d+")?(?: COLOR="#[0-9a-f]{6}")?)>')
_ENTITY = re.compile(r"&(?:amp|lt|gt|quot|#39);")


def _mul_graph() -> Graph:
    w = torch.ones(3, requires_grad=True)
    return gradprobe.trace((w * w).sum(), names={"w": w})


def _label_texts(dot: str) -> list[str]:
    """Every label's visible text: tags removed, entities and backslashes undone."""
    out = []
    for line in dot.splitlines():
        match = _STATEMENT.match(line) or _CLUSTER_LABEL.match(line)
        if match:
            text = _TAGS.sub("", match["label"].replace("<BR/>", "\n"))
            out.append(html.unescape(text).replace("\\\\", "\\"))
    return out


def _check_well_formed(dot: str) -> None:
    """Every line is a statement gradprobe writes, and every label escapes its text."""
    lines = dot.splitlines()
    assert lines[0] == "digraph gradprobe {" and lines[-1] == "}"
    for line in lines[4:-1]:
        stripped = line.strip()
        if stripped.startswith("subgraph cluster_") and stripped.endswith("{"):
            continue
        if stripped == "}" or _EDGE.match(line):
            continue
        match = _STATEMENT.match(line) or _CLUSTER_LABEL.match(line)
        assert match, f"unexpected DOT line: {line!r}"
        label = _TAGS.sub("", match["label"])
        assert "<" not in label and ">" not in label and '"' not in label, line
        assert "&" not in _ENTITY.sub("", label), line
        assert "\\" not in label.replace("\\\\", ""), line  # no lone backslash escapes
        assert not any(ord(c) < 0x20 for c in label), line


def _node_statements(dot: str) -> int:
    return sum(1 for line in dot.splitlines() if re.match(r"^\s*[nb]\d+ \[", line))


# -- golden and determinism ---------------------------------------------------------------------


def test_golden_dot_for_a_tiny_graph() -> None:
    first = to_dot(_mul_graph())
    assert first == GOLDEN_MUL
    assert to_dot(_mul_graph()) == first  # a second trace: byte-identical


def test_same_model_gives_identical_dot_across_traces() -> None:
    texts = []
    for _ in range(2):
        model = models.resnet18_like()
        out = model(models.example_input("resnet18_like", batch=2, size=32))
        graph = gradprobe.trace(out.sum(), model=model)
        texts.append((to_dot(graph, detail="full"), to_dot(graph, detail="collapsed")))
    assert texts[0] == texts[1]
    full = texts[0][0]
    _check_well_formed(full)
    assert _node_statements(full) == len(graph)
    # Node ids come from node.id only.
    ids = {int(i) for i in re.findall(r"^\s*n(\d+) \[", full, re.MULTILINE)}
    assert ids == set(range(len(graph)))


# -- escaping -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("<script>", "&lt;script&gt;"),
        ('a"b', "a&quot;b"),
        ("it's", "it&#39;s"),
        ("&amp;", "&amp;amp;"),
        ("x\\ny", "x\\\\ny"),  # a literal backslash is doubled: Graphviz would eat it
        ("\\N", "\\\\N"),  # ... or expand \N to the node id
        ("x\ny", "x\\\\ny"),  # a real newline shows as \n
        ("nul\x00", "nul\\\\x00"),
        ("\ud800", "\ufffd"),  # a lone surrogate cannot be encoded
        ("{}[];=->", "{}[];=-&gt;"),
    ],
)
def test_html_text_escapes(text: str, escaped: str) -> None:
    assert html_text(text) == escaped


def test_html_text_shortens_long_names_keeping_the_end() -> None:
    name = "encoder." * 20 + "layers.11.linear2.weight"
    short = html_text(name, 40)
    assert len(short) == 40 and short.startswith("…") and short.endswith("linear2.weight")


def _evil_model() -> nn.Module:
    """Every evil string as a container module's name (a cluster) and a parameter's name."""
    model = nn.Module()
    for index, name in enumerate(EVIL):
        leaf = nn.Module()
        leaf.register_parameter(name, nn.Parameter(torch.full((2,), float(index))))
        container = nn.Module()
        container.add_module("sub", leaf)
        model.add_module(name, container)
    return model


def _evil_graph() -> Graph:
    model = _evil_model()
    total = sum((p * p).sum() for p in model.parameters())
    x = torch.ones(2, requires_grad=True)
    extra = {
        name: x if i == 0 else torch.ones(2, requires_grad=True) for i, name in enumerate(EVIL)
    }
    loss = total + torch.stack([(t * 2).sum() for t in extra.values()]).sum()
    return gradprobe.trace(loss, model=model, names=extra)


def test_names_cannot_inject_dot_or_markup() -> None:
    graph = _evil_graph()
    dot = to_dot(graph, detail="full")
    _check_well_formed(dot)
    assert "<script" not in dot
    texts = "\n".join(_label_texts(dot))
    for name in EVIL:
        shown = name.replace("\n", "\\n").replace("\t", "\\t").replace("\x00", "\\x00")
        assert shown in texts, name  # every name is still shown, verbatim
    # Module names become cluster labels, escaped the same way.
    assert dot.count("subgraph cluster_") == len(EVIL)


# -- what is drawn -------------------------------------------------------------------------------


def test_clusters_for_named_modules() -> None:
    model = models.resnet18_like()
    graph = gradprobe.trace(
        model(models.example_input("resnet18_like", batch=2, size=32)).sum(), model=model
    )
    dot = to_dot(graph, detail="full")
    labels = set(_label_texts(dot))
    for module in ("layer1", "layer1.0", "layer2.0.downsample", "layer4.1"):
        assert module in labels
    # 4 stages, 8 blocks, 3 downsample containers.
    assert dot.count("subgraph cluster_") == 15
    # traced before any backward: the gradient is still to come, not missing
    assert "layer1.0.conv1.weight\n(64, 64, 3, 3) float32\ngrad not computed yet" in labels
    # Ops name the leaf module they run in, relative to their cluster.
    assert any(text.startswith("Convolution\nconv1\n") for text in labels)


def test_collapsed_transformer_is_small_and_names_the_first_layer() -> None:
    model = models.transformer_encoder(24, d_model=64, nhead=4)
    out = model(torch.randn(2, 8, 64))
    graph = gradprobe.trace(out.sum(), model=model)
    full = to_dot(graph, detail="full")
    collapsed = to_dot(graph, detail="collapsed")
    assert to_dot(graph) == collapsed  # auto: large graphs collapse
    _check_well_formed(collapsed)
    assert _node_statements(full) == len(graph) > 1000
    assert _node_statements(collapsed) < len(graph) / 8
    texts = "\n".join(_label_texts(collapsed))
    for param in ("in_proj_weight", "out_proj.weight", "linear1.weight", "norm2.bias"):
        assert f"layers.0.self_attn.{param}" in texts or f"layers.0.{param}" in texts
    assert "layers.2 … layers.23: 22 × TransformerEncoderLayer\nsame as layers.1" in texts
    assert re.search(rf"\d+ of {len(graph):,} nodes are inside 1 box", texts)
    assert "detail='full' draws every node" in texts.replace("\n", " ")


def test_stale_saved_tensor_is_marked_red() -> None:
    graph = _mul_graph()
    mul = graph.nodes[1]
    stale = dataclasses.replace(mul.saved[0], version_saved=0, version_now=2)
    nodes = list(graph.nodes)
    nodes[1] = dataclasses.replace(mul, saved=(stale, *mul.saved[1:]))
    dot = to_dot(dataclasses.replace(graph, nodes=tuple(nodes)))
    [line] = [line for line in dot.splitlines() if line.startswith("  n1 [")]
    assert (
        '<FONT POINT-SIZE="8" COLOR="#c62828">other: w (3,) float32 saved v0 → now v2 STALE' in line
    )
    assert 'color="#c62828"' in line and 'penwidth="2"' in line
    assert "STALE" not in to_dot(graph)


def test_stale_saved_tensor_shows_even_without_saved_tensors() -> None:
    graph = _mul_graph()
    mul = graph.nodes[1]
    stale = dataclasses.replace(mul.saved[1], version_saved=1, version_now=3)
    nodes = list(graph.nodes)
    nodes[1] = dataclasses.replace(mul, saved=(mul.saved[0], stale))
    texts = _label_texts(to_dot(dataclasses.replace(graph, nodes=tuple(nodes)), show_saved=False))
    assert "Mul\nself: w (3,) float32 saved v1 → now v3 STALE" in texts


class _SavesEight(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(*(x + i for i in range(8)))
        return x * 1

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        return grad


def test_long_saved_lists_are_cut_and_metadata_is_escaped() -> None:
    x = torch.ones(2, requires_grad=True)
    graph = gradprobe.trace(_SavesEight.apply(x).sum())
    [node] = [n for n in graph.nodes if n.kind == "custom_function"]
    evil = {
        "forward": EVIL[0],
        "stack": "line 1\nline 2",
        "zzz": "hidden: over the limit",
        "a": "&",
    }
    nodes = list(graph.nodes)
    nodes[node.id] = dataclasses.replace(node, metadata=evil)
    dot = to_dot(dataclasses.replace(graph, nodes=tuple(nodes)))
    _check_well_formed(dot)
    [text] = [t for t in _label_texts(dot) if t.startswith("_SavesEight")]
    lines = text.split("\n")
    assert lines[:5] == [
        "_SavesEight",
        "custom function",
        "a: &",
        EVIL[0],
        "stack: line 1\\nline 2",
    ]
    assert "hidden: over the limit" not in text  # at most three metadata lines
    assert sum(line.startswith("saved_tensors[") for line in lines) == 6
    assert lines[-1] == "+2 more saved"


def test_freed_graph_is_shown_as_freed() -> None:
    w = torch.ones(3, requires_grad=True)
    loss = (w.exp() * w).sum()
    loss.backward()
    graph = gradprobe.trace(loss, names={"w": w})
    assert graph.freed
    dot = to_dot(graph)
    texts = "\n".join(_label_texts(dot))
    assert "saved tensors freed by backward()" in texts
    assert "⚠ freed" in texts
    assert "dashed" in dot
    assert "grad ✓" in texts  # w.grad is set now


def test_truncated_graph_shows_a_note() -> None:
    x = torch.ones(2, requires_grad=True)
    y = x
    for _ in range(10):
        y = y * 2
    graph = gradprobe.trace(y.sum(), max_nodes=4)
    assert graph.truncated is not None
    dot = to_dot(graph)
    [notes] = [line for line in dot.splitlines() if line.startswith("  notes ")]
    assert "truncated at max_nodes=4" in notes and 'shape="note"' in notes
    assert "truncated" not in to_dot(gradprobe.trace(y.sum()))


def test_roots_are_drawn_as_outputs() -> None:
    x = torch.ones(2, requires_grad=True)
    a, b = x * 2, x + 1
    constant = torch.zeros(2)
    graph = gradprobe.trace(a, b, constant, names={"a": a, "b": b, "const": constant})
    dot = to_dot(graph)
    roots = [line for line in dot.splitlines() if re.match(r"^  r\d+ \[", line)]
    assert len(roots) == 3 and all('shape="oval"' in line for line in roots)
    texts = _label_texts(dot)
    assert "a\n(2,) float32" in texts and "b\n(2,) float32" in texts
    assert "const\n(2,) float32\nno autograd graph" in texts
    assert f"n{graph.roots[0].node} -> r0" in dot
    assert "-> r2" not in dot


class _Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        return grad * 2


def test_custom_function_names_its_forward() -> None:
    x = torch.ones(2, requires_grad=True)
    dot = to_dot(gradprobe.trace(_Double.apply(x).sum()))
    texts = _label_texts(dot)
    assert "_Double\ncustom function\ntest_render_dot._Double" in texts


def test_options_change_the_output() -> None:
    graph = _mul_graph()
    assert 'rankdir="LR"' in to_dot(graph, rankdir="LR")
    plain = to_dot(graph, show_saved=False)
    assert "self: w" in to_dot(graph) and "self: w" not in plain


@pytest.mark.parametrize(
    ("kwargs", "error", "mentions"),
    [
        ({"detail": "bogus"}, GradprobeValueError, "'bogus'"),
        ({"rankdir": "up"}, GradprobeValueError, "'up'"),
    ],
)
def test_bad_options_are_reported(
    kwargs: dict[str, Any], error: type[Exception], mentions: str
) -> None:
    with pytest.raises(error, match=mentions):
        to_dot(_mul_graph(), **kwargs)


def test_only_graphs_can_be_drawn() -> None:
    with pytest.raises(GradprobeTypeError, match=r"gradprobe.trace\(loss"):
        to_dot(torch.ones(2))  # type: ignore[arg-type]


def _hand_built(**changes: Any) -> Graph:
    w = torch.ones(3, requires_grad=True)
    graph = gradprobe.trace((w * 2).sum(), names={"w": w})
    return dataclasses.replace(graph, **changes)


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (
            lambda g: {"nodes": (dataclasses.replace(g.nodes[0], id=7), *g.nodes[1:])},
            r"nodes\[0\] has id 7; node ids must be their positions",
        ),
        (
            lambda g: {"edges": (*g.edges, Edge(0, 9, 0, 0))},
            (
                r"edges\[2\] = Edge\(src=0, dst=9, slot=0, input_nr=0\) names node 9, but the "
                r"graph has 3 nodes"
            ),
        ),
        (lambda g: {"edges": ((0, 1),)}, r"edges\[0\] is \(0, 1\), not an Edge"),
        (
            lambda g: {"roots": (dataclasses.replace(g.roots[0], node=3),)},
            r"roots\[0\] \('output'\) enters at node 3, but the graph has 3 nodes",
        ),
        (lambda g: {"nodes": ("SumBackward0",)}, r"nodes\[0\] is a str, not a Node"),
        (lambda g: {"nodes": None}, "nodes is NoneType, not a tuple"),
    ],
    ids=["node-id", "edge-range", "edge-type", "root-range", "node-type", "nodes-none"],
)
def test_a_malformed_graph_is_named_not_crashed_on(make: Any, problem: str) -> None:
    good = _hand_built()
    assert to_dot(good)  # the graph they are made from draws
    bad = _hand_built(**make(good))
    with pytest.raises(
        GradprobeValueError, match=rf"^to_dot\(\) cannot draw this Graph: {problem}"
    ):
        to_dot(bad)
    with pytest.raises(GradprobeValueError, match=problem):
        gradprobe.to_svg(bad)
