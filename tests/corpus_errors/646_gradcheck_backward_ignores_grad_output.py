"""Case 646 - custom loss Function whose backward ignores grad_output

Source: pytorch/pytorch test/test_autograd.py, test_gradcheck_backward_mul_by_grad_output (assertRaisesRegex "backward not multiplied by grad_output")
Category: gradcheck

Reported symptom:
    torch.autograd.gradcheck.GradcheckError: backward not multiplied by grad_output

Root cause:
    SquaredError returns a scalar, and its backward returns 2 * (pred - target)
    without multiplying by grad_out. For a scalar output called with grad 1.0 the
    Jacobian looks right, but the gradient is wrong as soon as the loss is scaled or
    combined (e.g. 0.5 * loss); gradcheck calls backward with a zero grad_output and
    reports that the result does not scale with it.

Ground truth a good tool should report:
    The `return` line of SquaredError.backward must multiply by grad_out; raised at
    the gradcheck call.
"""
import torch
from torch.autograd import gradcheck

torch.manual_seed(0)


class SquaredError(torch.autograd.Function):
    @staticmethod
    def forward(ctx, pred, target):
        diff = pred - target
        ctx.save_for_backward(diff)
        return diff.pow(2).sum()

    @staticmethod
    def backward(ctx, grad_out):
        (diff,) = ctx.saved_tensors
        return 2 * diff, None  # <- CAUSE: grad_out is ignored


pred = torch.randn(6, dtype=torch.float64, requires_grad=True)
target = torch.randn(6, dtype=torch.float64)
gradcheck(SquaredError.apply, (pred, target))  # <- ERROR
print("SquaredError verified")
