"""An input that has been returned as-is as output is being saved for backward."""

import torch


class Passthrough(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad):
        return grad


x = torch.randn(3, requires_grad=True)
y = Passthrough.apply(x)  # <- CAUSE
