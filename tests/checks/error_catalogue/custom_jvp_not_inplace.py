"""An inplace custom Function is not modifying the forward mode gradients inplace."""

import torch
import torch.autograd.forward_ad as fwAD


class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def jvp(ctx, tangent):
        return tangent * 2  # <- CAUSE

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


with fwAD.dual_level():
    x = fwAD.make_dual(torch.randn(3), torch.ones(3))
    y = Double.apply(x)  # <- ERROR
