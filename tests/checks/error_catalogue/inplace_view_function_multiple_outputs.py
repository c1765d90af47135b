"""If your Function modifies inplace an input that is a view of another Tensor, your Function cannot return more than one Tensor."""

import torch


class AddAndNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, r):
        x.add_(r)
        ctx.mark_dirty(x)
        return x, x.norm()

    @staticmethod
    def backward(ctx, grad_x, grad_norm):
        return grad_x, grad_x


def add_and_norm(x, r):
    return AddAndNorm.apply(x, r)  # <- ERROR


w = torch.randn(4, 6, requires_grad=True)
h = w * 1.0
r = torch.randn(4, 3)
out, norm = add_and_norm(h[:, :3], r)  # <- CAUSE
