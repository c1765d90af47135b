"""Output 0 of ...Backward is a view and is being modified inplace (from a custom Function)."""

import torch


class Identity(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad


w = torch.randn(3, requires_grad=True)
out = Identity.apply(w * 2)
out.mul_(2)  # <- CAUSE
