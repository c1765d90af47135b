"""Expected isFloatingType(grad.scalar_type()) || (input_is_complex == grad_is_complex) to be true, but got false."""

import torch


class ToComplex(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * (2 + 1j)  # <- CAUSE


x = torch.randn(3, requires_grad=True)
y = ToComplex.apply(x)
y.sum().backward()  # <- ERROR
