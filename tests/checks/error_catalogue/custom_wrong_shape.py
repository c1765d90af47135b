"""Function SumAllBackward returned an invalid gradient at index 0 - got [] but expected ..."""

import torch


class SumAll(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad.sum()  # <- CAUSE


w = torch.randn(3, requires_grad=True)
y = SumAll.apply(w)  # <- CREATED
y.sum().backward()  # <- ERROR
