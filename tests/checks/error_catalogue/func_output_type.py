"""vjp(f, *primals): expected f(*primals) to return only tensors, got unsupported type <class 'float'>"""

import torch


def energy(x):
    return (x**2).sum().item()  # <- CAUSE


out, vjp_fn = torch.func.vjp(energy, torch.randn(3))  # <- ERROR
