"""gradprobe.trace() on a torch.compile'd model: each compiled graph is one box, labelled
with the function dynamo compiled, its line and the submodules it holds."""

import sys

import torch
from torch import nn

import gradprobe


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
        self.head = nn.Linear(4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.encoder(x)
        torch._dynamo.graph_break()  # stands for any graph break
        return self.head(z.tanh())


torch.manual_seed(0)
net = Net()
model = torch.compile(net, backend="aot_eager")
loss = model(torch.randn(32, 8)).pow(2).mean()

graph = gradprobe.trace(loss, model=net)
for node in graph.nodes:
    if node.kind == "compiled":
        print(f"{node.label}: " + "; ".join(f"{k}={v}" for k, v in node.metadata.items()))
# expect: CompiledFunction: forward=torch.compile: Net.forward; source=compile_trace.py:18; modules=encoder.0, encoder.1, encoder.2
print(f"{len(graph.nodes)} nodes in all")

if len(sys.argv) > 1:  # docs/gen_compile.py: the picture for docs/compile.md
    gradprobe.save_svg(graph, sys.argv[1])
