"""You are attempting to call Tensor.requires_grad_() inside of a functorch transform."""

import torch


def f(x):
    x.requires_grad_()  # <- CAUSE
    return (x * 2).sum()


torch.func.grad(f)(torch.randn(3))
