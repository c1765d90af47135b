"""Case 631 - hand-written row-norm backward divides 0 by 0 on padded rows (ops module)

Source: pytorch/pytorch test/test_autograd.py, test_anomaly_detect_nan (assertRaisesRegex "Function 'MyFuncBackward' returned nan values in its 0th output.")
Category: anomaly-nan

Reported symptom:
    RuntimeError: Function 'RowNormBackward' returned nan values in its 0th output.

Root cause:
    RowNorm.backward returns grad * x / norm. For an all-zero row (padding tokens
    after a bias-free projection and ReLU) both x and norm are 0, so the gradient is
    0 / 0 = NaN. Anomaly mode, enabled in train.py, checks every backward output
    and stops at RowNormBackward.

Ground truth a good tool should report:
    The `return` of RowNorm.backward (divide by norm.clamp_min(eps), or return 0 for
    zero rows); raised at loss.backward() in train.py.
"""
import torch


class RowNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        norm = x.pow(2).sum(dim=-1, keepdim=True).sqrt()
        ctx.save_for_backward(x, norm)
        return norm

    @staticmethod
    def backward(ctx, grad_out):
        x, norm = ctx.saved_tensors
        return grad_out * x / norm  # <- CAUSE: 0/0 for all-zero rows


def row_norm(x):
    return RowNorm.apply(x)
