"""The Tensor returned by the function given to hessian should contain a single element"""

import torch


def energy(x):
    return x**2


h = torch.autograd.functional.hessian(energy, torch.randn(3))  # <- CAUSE
