"""a leaf Variable that requires grad has been used in an in-place operation (mark_dirty)."""

import torch


class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


w = torch.randn(3, requires_grad=True)
Double.apply(w).sum().backward()  # <- CAUSE
