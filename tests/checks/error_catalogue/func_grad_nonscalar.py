"""grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor."""

import torch


def f(x):
    return x * 2


torch.func.grad(f)(torch.randn(3))  # <- CAUSE
