"""Case 639 - in-place custom Function (mark_dirty) applied straight to a Parameter

Source: pytorch/pytorch test/test_autograd.py, test_return_duplicate_inplace ("Can't modify leaf variables in-place": assertRaises RuntimeError for an in-place Function on a leaf)
Category: custom-function

Reported symptom:
    RuntimeError: a leaf Variable that requires grad has been used in an in-place operation.

Root cause:
    HardClamp_ clamps its input in-place and declares it with ctx.mark_dirty. The
    layer applies it directly to self.weight to keep the weights bounded. The
    weight is a leaf that requires grad; a custom Function may not dirty (modify
    in-place) such a leaf, so apply() refuses.

Ground truth a good tool should report:
    The `HardClamp_.apply(self.weight, ...)` call in BoundedLinear.forward: apply it
    to a copy (self.weight.clone()) or use the out-of-place clamp.
"""
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)


class HardClamp_(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bound):
        inside = x.abs() <= bound
        x.clamp_(-bound, bound)
        ctx.mark_dirty(x)
        ctx.save_for_backward(inside)
        return x

    @staticmethod
    def backward(ctx, grad_out):
        (inside,) = ctx.saved_tensors
        return grad_out * inside, None


class BoundedLinear(nn.Linear):
    def forward(self, x):
        w = HardClamp_.apply(self.weight, 0.5)  # <- CAUSE,ERROR
        return F.linear(x, w, self.bias)


model = nn.Sequential(BoundedLinear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 4), torch.randn(16, 1)
for step in range(3):
    loss = F.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
