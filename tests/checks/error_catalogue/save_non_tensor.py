"""save_for_backward can only save variables, but argument 1 is of type float."""

import torch


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x, k)  # <- CAUSE
        return x * k

    @staticmethod
    def backward(ctx, grad):
        return grad, None


w = torch.randn(3, requires_grad=True)
Scale.apply(w, 2.0).sum().backward()
