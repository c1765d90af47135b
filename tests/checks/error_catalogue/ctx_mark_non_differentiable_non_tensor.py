"""mark_non_differentiable only accepts variable arguments, but got int"""

import torch


class ArgMax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        index = int(x.argmax())
        ctx.mark_non_differentiable(index)  # <- CAUSE
        return x.max(), index

    @staticmethod
    def backward(ctx, grad, _):
        return grad


x = torch.randn(3, requires_grad=True)
value, index = ArgMax.apply(x)
