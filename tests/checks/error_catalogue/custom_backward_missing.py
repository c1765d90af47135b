"""You must implement either the backward or vjp method for your custom autograd.Function to use it with backward mode AD."""

import torch


class Clamp(torch.autograd.Function):  # <- CAUSE
    @staticmethod
    def forward(ctx, x):
        return x.clamp(0, 1)


x = torch.randn(3, requires_grad=True)
Clamp.apply(x).sum().backward()  # <- ERROR
