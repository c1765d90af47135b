"""Jacobian mismatch for output 0 with respect to input 0,"""

import torch


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2 * x**2  # <- CAUSE


x = torch.randn(5, dtype=torch.float64, requires_grad=True)
torch.autograd.gradcheck(Cube.apply, (x,))  # <- ERROR
