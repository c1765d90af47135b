"""ctx.mark_dirty() received a tensor that was not an input."""

import torch


class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x * 2
        ctx.mark_dirty(y)  # <- CAUSE
        return y

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


x = torch.randn(3, requires_grad=True)
out = Double.apply(x.clone())  # <- WARNED
out.sum().backward()
