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
import torch.nn as nn

from layers import PartialResidual


class Regressor(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.inp = nn.Linear(4, dim)
        self.mix = PartialResidual(dim)
        self.out = nn.Linear(dim, 1)

    def forward(self, x):
        return self.out(self.mix(self.inp(x)))
