"""Expected pytree structure of cotangents to be the same as pytree structure of outputs to the function."""

import torch
from torch.func import vjp


def f(x):
    return x.sin(), x.cos()


x = torch.randn(3)
outputs, vjp_fn = vjp(f, x)
(grad,) = vjp_fn(torch.ones(3))  # <- CAUSE
