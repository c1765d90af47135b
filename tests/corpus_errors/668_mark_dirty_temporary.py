"""Case 668 - mark_dirty called on a temporary created inside forward

Source: pytorch/pytorch test/test_autograd.py, test_autograd_inplace_views_python ('Should not give non-inputs to mark_dirty', assertion that exactly one warning is raised)
Category: custom autograd.Function + mark_dirty (warning)

Reported symptom:
    UserWarning: ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have been mutated should be passed to ctx.mark_dirty(). (Triggered internally at /__w/pytorch/pytorch/torch/csrc/autograd/custom_function.cpp:320.)

Root cause:
    ScaleShift.forward builds a new tensor `out = x * scale`, shifts it in
    place and then passes `out` to ctx.mark_dirty. mark_dirty is only for
    *inputs* mutated in place; giving it a freshly created tensor is a misuse
    that autograd flags (and which will become an error).

Ground truth a good tool should report:
    `ctx.mark_dirty(out)` (CAUSE) marks a tensor that is not an input of the
    Function; drop the call (out is not an input). The warning is emitted at
    the apply call (ERROR).
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class ScaleShift(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, shift):
        out = x * scale
        out.add_(shift)
        ctx.mark_dirty(out)  # <- CAUSE
        ctx.save_for_backward(x, scale)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        x, scale = ctx.saved_tensors
        return grad_out * scale, (grad_out * x).sum(0), grad_out.sum(0)


class Affine(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(dim))
        self.shift = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        return ScaleShift.apply(x, self.scale, self.shift)  # <- ERROR


model = nn.Sequential(nn.Linear(3, 4), Affine(4), nn.Tanh(), nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
opt.zero_grad()
loss = nn.functional.mse_loss(model(x), y)
loss.backward()
opt.step()
print("loss", loss.item())
