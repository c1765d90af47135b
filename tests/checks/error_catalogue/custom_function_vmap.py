"""To use autograd.Function with vmap, you must either override the vmap staticmethod or set generate_vmap_rule=True."""

import torch


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x**3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad


out = torch.vmap(Cube.apply)(torch.randn(5, 3))  # <- CAUSE
