"""Case 671 - strict jacobian of a function that round-trips through NumPy

Source: pytorch/pytorch test/test_autograd.py, test_jacobian_err_check_strict (assertRaisesRegex 'Output 0 of the user-provided function does not require gradients.')
Category: torch.autograd.functional / graph break

Reported symptom:
    RuntimeError: Output 0 of the user-provided function does not require gradients. The outputs must be computed in a differentiable manner from the input when running in strict mode.

Root cause:
    The soft-clipping nonlinearity is implemented with NumPy: the tensor is
    detached, converted, transformed and wrapped back with torch.from_numpy.
    The result has no autograd history, so the Jacobian w.r.t. the input would
    silently be zero; with strict=True autograd.functional refuses.

Ground truth a good tool should report:
    The NumPy round trip `x.detach().numpy()` in `soft_clip` (CAUSE) cuts the
    graph; jacobian(..., strict=True) raises (ERROR). Use torch.tanh instead.
"""
import numpy as np
import torch
from torch.autograd.functional import jacobian

torch.manual_seed(0)

W = torch.randn(4, 4)


def soft_clip(x, limit=2.0):
    arr = np.tanh(x.detach().numpy() / limit) * limit  # <- CAUSE
    return torch.from_numpy(arr)


def dynamics(state):
    return soft_clip(W @ state + 0.1 * state)


state = torch.randn(4)
next_state = dynamics(state)
print("next state:", next_state)

J = jacobian(dynamics, state, strict=True)  # <- ERROR
print("spectral radius:", torch.linalg.eigvals(J).abs().max())
