"""trying to differentiate twice a function that was marked with @once_differentiable."""

import torch
from torch.autograd.function import once_differentiable


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    @once_differentiable  # <- CAUSE
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


w = torch.randn(3, requires_grad=True)
y = Square.apply(w)
v = torch.ones(3, requires_grad=True)
(g,) = torch.autograd.grad(y, w, v, create_graph=True)
g.sum().backward()  # <- ERROR
