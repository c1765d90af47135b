"""Case 666 - in-place fused residual add applied to a narrowed view, returning two tensors

Source: pytorch/pytorch test/test_autograd.py, test_autograd_inplace_views_python (assertRaisesRegex 'your Function modifies inplace an input that is a view of another Tensor')
Category: custom autograd.Function + mark_dirty + views

Reported symptom:
    RuntimeError: If your Function modifies inplace an input that is a view of another Tensor, your Function cannot return more than one Tensor. This is not supported by the current autograd engine. You should either make sure the input is not a view (using .clone() for example) or make your Function only return one Tensor (potentially splitting it into two Functions: one doing the inplace that returns a single Tensor and a second one that does the other operations). You can ask on the forum https://discuss.pytorch.org/ if you need help to do this change.

Root cause:
    FusedResidualAdd (utils/ops.py) adds the residual into its first input in
    place, marks it dirty and returns two tensors (the updated input and its
    RMS). PartialResidual (layers.py) calls it on `h.narrow(...)`, a view of a
    larger activation. Autograd cannot rebase a dirty view input when the
    Function has more than one output, so the call is rejected.

Ground truth a good tool should report:
    The call in layers.py that passes `h.narrow(-1, 0, self.half)` (a view) to
    the in-place two-output Function (CAUSE); clone the slice or make the
    Function return a single tensor. Raised at the apply call in utils/ops.py
    (ERROR).
"""
import torch


class FusedResidualAdd(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, residual):
        x.add_(residual)
        ctx.mark_dirty(x)
        rms = x.pow(2).mean(-1, keepdim=True).sqrt()
        ctx.save_for_backward(x, rms)
        return x, rms

    @staticmethod
    def backward(ctx, grad_x, grad_rms):
        x, rms = ctx.saved_tensors
        grad = grad_x + grad_rms * x / (rms * x.shape[-1])
        return grad, grad


def fused_residual_add_(x, residual):
    return FusedResidualAdd.apply(x, residual)  # <- ERROR
