"""function ScaleBackward returned an incorrect number of gradients (expected 2, got 1)."""

import torch


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.k  # <- CAUSE


w = torch.randn(3, requires_grad=True)
y = Scale.apply(w, 2.0)  # <- CREATED
y.sum().backward()  # <- ERROR
