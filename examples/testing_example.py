"""gradprobe.testing without pytest: autograd assertions whose failures say why.

Run: python examples/testing_example.py

Each check below fails on purpose; the script prints the message a test would show.
"""

import torch
from torch import nn

import gradprobe
from gradprobe.testing import (
    GradprobeAssertionError,
    assert_grad_flows,
    assert_gradcheck,
    assert_is_leaf,
)

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Linear(8, 16)
        self.head = nn.Linear(16, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.features(x)).detach())  # the bug


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):  # type: ignore[no-untyped-def, override]
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad):  # type: ignore[no-untyped-def, override]
        (x,) = ctx.saved_tensors
        return grad * 3 * x  # the bug: should be 3 * x**2


def show(title: str, check) -> None:  # type: ignore[no-untyped-def]
    print(f"--- {title}")
    try:
        check()
    except GradprobeAssertionError as error:
        print(error)
        print("findings:", [(f.code, f.parameter or f.node or f.tensor) for f in error.findings])
    else:
        print("passed")


model = Classifier()
x = torch.randn(4, 8)

# Under a recording the failure names the line that cut the graph.
with gradprobe.record():
    loss = model(x).sum()
    show("assert_grad_flows", lambda: assert_grad_flows(model, loss))
# expect: assert_grad_flows: 2 of 4 parameters get no usable gradient:
# expect: ✗ features.weight (16, 8): no .grad: not in the graph of the loss; the recording saw the graph cut at testing_example.py:29 by .detach()
# expect: findings: [('GP107', 'features.weight'), ('GP107', 'features.bias')]

inputs = (torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64, requires_grad=True),)
show("assert_gradcheck", lambda: assert_gradcheck(Cube.apply, inputs))
# expect: ✗ custom autograd.Function Cube: its backward alone fails gradcheck
# expect: findings: [('GP121', 'CubeBackward')]

weights = torch.zeros(3, dtype=torch.float64, requires_grad=True).float()
show("assert_is_leaf", lambda: assert_is_leaf(weights, "weights"))
# expect: assert_is_leaf: weights is not a leaf: it was produced by ToCopyBackward0
# expect: findings: [('GP106', 'weights')]

layer = nn.Linear(4, 2)
show("a healthy layer", lambda: assert_grad_flows(layer, layer(torch.ones(3, 4)).sum()))
# expect: passed
