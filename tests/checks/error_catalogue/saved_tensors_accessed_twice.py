"""saved_tensors can only be accessed once when clear_saved_tensors_on_access=True"""

import torch


class Square(torch.autograd.Function):
    clear_saved_tensors_on_access = True

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        scale = ctx.saved_tensors[0].abs().max()  # <- CAUSE
        return 2 * x * grad / scale


x = torch.randn(3, requires_grad=True)
Square.apply(x).sum().backward()  # <- ERROR
