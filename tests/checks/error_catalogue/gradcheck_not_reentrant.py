"""Backward is not reentrant, i.e., running backward with same input and grad_output ..."""

import torch


class NoisyScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2 + 1e-3 * torch.randn_like(grad)  # <- CAUSE


x = torch.randn(4, dtype=torch.float64, requires_grad=True)
torch.autograd.gradcheck(NoisyScale.apply, (x,))  # <- ERROR
