"""Implementing both 'backward' and 'vjp' for a custom Function is not allowed."""

import torch


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad

    vjp = backward  # <- CAUSE


x = torch.randn(3, requires_grad=True)
y = Square.apply(x)
y.sum().backward()  # <- ERROR
