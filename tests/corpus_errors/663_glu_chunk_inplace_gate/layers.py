"""Case 663 - gated linear unit gates one chunk of its projection in place

Source: pytorch/pytorch test/test_autograd.py, test_inplace_view_multi_output_safe (split/chunk outputs modified in place)
Category: views + in-place

Reported symptom:
    RuntimeError: Output 0 of Split is a view and is being modified inplace. This view is the output of a function that returns multiple views. Such functions do not allow the output views to be modified inplace. You should replace the inplace operation by an out-of-place one.

Root cause:
    GatedFeedForward splits its projection with `chunk(2, dim=-1)` and then
    multiplies the value half in place by the sigmoid gate. `chunk` returns
    several views of one base; autograd forbids in-place modification of
    outputs of multi-view functions because it cannot rewrite their history.

Ground truth a good tool should report:
    `value.mul_(torch.sigmoid(gate))` in layers.py (CAUSE/ERROR) modifies a view
    returned by `chunk` (CREATED); write `value = value * torch.sigmoid(gate)`.
"""
import torch
import torch.nn as nn


class GatedFeedForward(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.proj_in = nn.Linear(dim, 2 * hidden)
        self.proj_out = nn.Linear(hidden, dim)

    def forward(self, x):
        value, gate = self.proj_in(x).chunk(2, dim=-1)  # <- CREATED
        value.mul_(torch.sigmoid(gate))  # <- CAUSE,ERROR
        return self.proj_out(value)


class Block(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ff = GatedFeedForward(dim, hidden)

    def forward(self, x):
        return x + self.ff(self.norm(x))
