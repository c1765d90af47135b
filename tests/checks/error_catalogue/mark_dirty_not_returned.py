"""Some elements marked as dirty during the forward method were not returned as output."""

import torch


class ScaleInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x * 1

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


x = torch.randn(3, requires_grad=True).clone()
y = ScaleInplace.apply(x)  # <- CAUSE
