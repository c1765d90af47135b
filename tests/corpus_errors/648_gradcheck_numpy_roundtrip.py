"""Case 648 - function under test round-trips through NumPy and loses the graph

Source: pytorch/pytorch test/test_autograd.py, test_gradcheck_check_no_differentiable_outputs (assertRaisesRegex "Numerical gradient for function expected to be zero")
Category: gradcheck

Reported symptom:
    torch.autograd.gradcheck.GradcheckError: Numerical gradient for function expected to be zero

Root cause:
    smooth_clip computes its result with NumPy (x.detach().numpy() then
    torch.from_numpy), so the returned tensor has no autograd graph and does not
    require grad. gradcheck then expects the numerical gradient to be zero, but the
    function clearly depends on its input.

Ground truth a good tool should report:
    The NumPy round-trip line in smooth_clip (`np.tanh(x.detach().numpy())`): keep
    the computation in torch (torch.tanh) so it stays differentiable; raised by the
    gradcheck call.
"""
import numpy as np
import torch
from torch.autograd import gradcheck

torch.manual_seed(0)


def smooth_clip(x, limit=2.0):
    y = np.tanh(x.detach().numpy() / limit) * limit  # <- CAUSE: leaves autograd
    return torch.from_numpy(y)


x = torch.randn(5, dtype=torch.float64, requires_grad=True)
gradcheck(smooth_clip, (x,))  # <- ERROR
print("smooth_clip verified")
