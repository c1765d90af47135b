"""trace() on a torch.compile'd model: each compiled region is one box, labelled with the
function dynamo compiled, its source line and the submodules whose operations it holds."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch
from torch import nn

import gradprobe

dynamo = pytest.importorskip("torch._dynamo")


@pytest.fixture(autouse=True)
def _fresh_dynamo() -> Iterator[None]:
    dynamo.reset()
    yield
    dynamo.reset()


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 5)
        self.fc2 = nn.Linear(5, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.fc1(x).relu())


def test_a_compiled_region_is_one_box_naming_where_it_came_from() -> None:
    net = Block()
    model = torch.compile(net, backend="aot_eager")
    x = torch.randn(3, 4, requires_grad=True)
    loss = (model(x) ** 2).mean()
    graph = gradprobe.trace(loss, model=net)
    (box,) = [node for node in graph.nodes if node.kind == "compiled"]
    assert box.name == "CompiledFunctionBackward"
    line = Block.forward.__code__.co_firstlineno
    assert dict(box.metadata) == {
        "forward": "torch.compile: Block.forward",
        "source": f"test_compile_trace.py:{line}",
        "modules": "fc1, fc2",
    }
    # the ops inside (addmm, relu, t) are not separate nodes; the box feeds the parameters
    assert not any(node.name.startswith(("Addmm", "Relu")) for node in graph.nodes)
    leaves = {graph.nodes[e.dst].label for e in graph.edges if e.src == box.id}
    assert {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"} <= leaves
    dot = gradprobe.to_dot(graph)
    assert "torch.compile: Block.forward" in dot
    assert "modules: fc1, fc2" in dot


def test_a_graph_break_gives_one_box_per_compiled_graph() -> None:
    class Broken(Block):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = self.fc1(x).relu()
            torch._dynamo.graph_break()
            return self.fc2(h)

    net = Broken()
    model = torch.compile(net, backend="aot_eager")
    loss = model(torch.randn(3, 4)).sum()
    boxes = [n for n in gradprobe.trace(loss).nodes if n.kind == "compiled"]
    assert len(boxes) == 2
    assert sorted(box.metadata.get("modules", "") for box in boxes) == ["fc1", "fc2"]
    by_module = {box.metadata["modules"]: box.metadata["forward"] for box in boxes}
    at = Broken.forward.__code__.co_firstlineno + 2  # the graph_break() line
    assert by_module == {
        "fc1": "torch.compile: Broken.forward",
        "fc2": f"torch.compile: Broken.forward after the graph break at line {at}",
    }


def test_the_eager_backend_leaves_ordinary_nodes() -> None:
    model = torch.compile(Block(), backend="eager")
    graph = gradprobe.trace(model(torch.randn(3, 4)).sum())
    assert [n for n in graph.nodes if n.kind == "compiled"] == []
    assert any(n.name == "AddmmBackward0" for n in graph.nodes)
