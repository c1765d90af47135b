"""Legacy autograd function with non-static forward method is deprecated. Please use new-style autograd function with static forward method."""

import torch


class Square(torch.autograd.Function):
    def forward(self, x):
        return x * x

    def backward(self, grad):
        return 2 * grad


x = torch.randn(3, requires_grad=True)
y = Square()(x)  # <- CAUSE
