"""expected Variable or None (got float)"""

import torch


class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return 2.0


x = torch.randn(3, requires_grad=True)
Double.apply(x).sum().backward()  # <- ERROR
