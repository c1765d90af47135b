"""Case 644 - gradcheck called on inputs that do not require grad

Source: pytorch/pytorch test/test_autograd.py, test_gradcheck_validates_inputs (assertRaisesRegex ValueError "at least one input tensor to require gradient")
Category: gradcheck

Reported symptom:
    ValueError: gradcheck expects at least one input tensor to require gradient, but none of them have requires_grad=True.

Root cause:
    The test inputs for the custom attention-score op are created as plain float64
    tensors. gradcheck only checks gradients with respect to inputs that require
    grad; with none marked, there is nothing to check and it raises.

Ground truth a good tool should report:
    The line creating the inputs (q, k) must pass requires_grad=True; the
    ValueError is raised by the gradcheck call.
"""
import math

import torch
from torch.autograd import gradcheck

torch.manual_seed(0)


class ScaledDot(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k):
        ctx.save_for_backward(q, k)
        return q @ k.t() / math.sqrt(q.shape[-1])

    @staticmethod
    def backward(ctx, grad_out):
        q, k = ctx.saved_tensors
        s = 1 / math.sqrt(q.shape[-1])
        return grad_out @ k * s, grad_out.t() @ q * s


q, k = torch.randn(3, 4, dtype=torch.float64), torch.randn(5, 4, dtype=torch.float64)  # <- CAUSE
gradcheck(ScaledDot.apply, (q, k))  # <- ERROR
print("ScaledDot gradients verified")
