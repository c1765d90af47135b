"""In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...), it must override the setup_context staticmethod."""

import torch


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad


def loss_fn(x):
    return Cube.apply(x).sum()  # <- CAUSE


grads = torch.func.grad(loss_fn)(torch.randn(3))
