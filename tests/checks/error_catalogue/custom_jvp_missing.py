"""You must implement the jvp function for custom autograd.Function to use it with forward mode AD."""

import torch
import torch.autograd.forward_ad as fwAD


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad


with fwAD.dual_level():
    x = fwAD.make_dual(torch.randn(3), torch.ones(3))
    y = Cube.apply(x)  # <- CAUSE
