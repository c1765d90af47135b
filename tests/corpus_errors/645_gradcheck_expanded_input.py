"""Case 645 - gradcheck on an input produced by expand() (stride 0)

Source: pytorch/pytorch test/test_autograd.py, test_gradcheck_validates_inputs (assertRaisesRegex "The 0th input has a dimension with stride 0")
Category: gradcheck

Reported symptom:
    RuntimeError: The 0th input has a dimension with stride 0. gradcheck only supports inputs that are non-overlapping to be able to compute the numerical gradients correctly. You should call .contiguous on the input before passing it to gradcheck.

Root cause:
    To test a batch of identical rows the script broadcasts a single row with
    expand(). The expanded tensor has stride 0 along the batch dimension, so all
    rows alias the same memory; perturbing one element for finite differences would
    perturb the whole column, and gradcheck rejects such inputs.

Ground truth a good tool should report:
    The `x = base.expand(...)` line: materialise the batch (.contiguous() /
    .repeat()) before passing it to gradcheck; raised at the gradcheck call.
"""
import torch
from torch.autograd import gradcheck

torch.manual_seed(0)


class RowSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.softmax(x, dim=-1)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return y * (grad_out - (grad_out * y).sum(-1, keepdim=True))


base = torch.randn(1, 5, dtype=torch.float64)
x = base.expand(4, 5).requires_grad_()  # <- CAUSE: stride-0 batch dimension
gradcheck(RowSoftmax.apply, (x,))  # <- ERROR
print("RowSoftmax gradients verified")
