"""mark_dirty can only accept variables, but argument 0 is of type int"""

import torch


class ArgMax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        index = int(x.argmax())
        ctx.mark_dirty(index)  # <- CAUSE
        return x.max(), index

    @staticmethod
    def backward(ctx, grad, _):
        return grad


x = torch.randn(3, requires_grad=True)
value, index = ArgMax.apply(x)
