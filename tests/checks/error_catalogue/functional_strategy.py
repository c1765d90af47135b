"""torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not supported together."""

import torch
from torch.autograd.functional import jacobian


def energy(x):
    return x.pow(2)


x = torch.randn(3)
J = jacobian(energy, x, strict=True, vectorize=True)  # <- CAUSE
