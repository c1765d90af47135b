"""torch.func transforms don't yet support saved tensor hooks. Please open an issue with your use case."""

import torch

layer = torch.nn.Linear(3, 3)


def loss_fn(x):
    return layer(x).relu().sum()


with torch.autograd.graph.save_on_cpu():
    grads = torch.func.grad(loss_fn)(torch.randn(2, 3))  # <- CAUSE
