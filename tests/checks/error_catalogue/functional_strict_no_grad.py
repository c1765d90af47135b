"""Output 0 of the user-provided function does not require gradients."""

import torch
from torch.autograd.functional import jacobian


def energy(x):
    return x.detach() * 2  # <- CAUSE


x = torch.randn(3)
J = jacobian(energy, x, strict=True)  # <- ERROR
