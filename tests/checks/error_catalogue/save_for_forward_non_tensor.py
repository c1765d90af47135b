"""save_for_forward expects all arguments to be tensors; you should save non-tensors as attributes on ctx."""

import torch


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.save_for_forward(x, factor)  # <- CAUSE
        return x * factor

    @staticmethod
    def jvp(ctx, tangent, _):
        return tangent * 2


x = torch.randn(3, requires_grad=True)
y = Scale.apply(x, 2.0)
