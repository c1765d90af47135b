"""A custom Function's forward is returning a view (or an input as-is) but the jvp is not returning a view"""

import torch
import torch.autograd.forward_ad as fwAD


class Identity(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def jvp(ctx, tangent):
        return tangent.clone()  # <- CAUSE

    @staticmethod
    def backward(ctx, grad):
        return grad


with fwAD.dual_level():
    x = fwAD.make_dual(torch.randn(3), torch.ones(3))
    y = Identity.apply(x)  # <- ERROR
