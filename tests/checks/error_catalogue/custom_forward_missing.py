"""You must implement the forward function for custom autograd.Function."""

import torch


class Clip(torch.autograd.Function):
    @staticmethod
    def foward(ctx, x):  # <- CAUSE
        return x.clamp(-1, 1)

    @staticmethod
    def backward(ctx, grad):
        return grad


x = torch.randn(3, requires_grad=True)
y = Clip.apply(x)  # <- ERROR
