"""Output 0 of the user-provided function is independent of input 0. This is not allowed in strict mode."""

import torch
from torch.autograd.functional import jacobian

bias = torch.randn(3, requires_grad=True)


def energy(x):
    return bias * 2  # <- CAUSE


x = torch.randn(3)
J = jacobian(energy, x, strict=True)  # <- ERROR
