"""Function's jvp returned an invalid number of forward gradients (expected 1 but got 2)"""

import torch
import torch.autograd.forward_ad as fwAD


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_forward(x)
        return x**3

    @staticmethod
    def jvp(ctx, tangent):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * tangent, tangent


with fwAD.dual_level():
    x = fwAD.make_dual(torch.randn(3), torch.ones(3))
    y = Cube.apply(x)  # <- CAUSE
