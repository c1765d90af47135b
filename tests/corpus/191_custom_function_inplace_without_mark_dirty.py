"""Case 191 - a custom Function that scales its input in place without ctx.mark_dirty().

Source: a frequent report (paraphrased): wrong gradients / "a view of a leaf Variable that
requires grad" errors from a Function written for memory.
Root cause: forward modifies its input in place and returns it without telling autograd
(ctx.mark_dirty): the input's saved versions and grad_fn are wrong. Call
ctx.mark_dirty(x) or return a new tensor.
"""
import torch
from torch import nn


class ScaleInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)  # <- CAUSE
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


torch.manual_seed(0)
fc = nn.Linear(3, 3)
h = torch.tanh(fc(torch.randn(4, 3)))  # <- SAVED
out = ScaleInPlace.apply(h)
out.sum().backward()  # <- ERROR
