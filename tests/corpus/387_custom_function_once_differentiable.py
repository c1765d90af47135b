"""A custom autograd Function (a clipped ReLU) with save_for_backward and
once_differentiable, used in a small network (correct)."""

import torch
from torch import nn
from torch.autograd.function import once_differentiable


class ClippedReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, top):
        ctx.save_for_backward(x)
        ctx.top = top
        return x.clamp(0, top)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        inside = (x > 0) & (x < ctx.top)
        return grad * inside.to(grad.dtype), None


torch.manual_seed(0)
l1, l2 = nn.Linear(6, 16), nn.Linear(16, 1)
opt = torch.optim.Adam([*l1.parameters(), *l2.parameters()], lr=1e-3)
for step in range(5):
    x, y = torch.randn(16, 6), torch.randn(16, 1)
    loss = nn.functional.mse_loss(l2(ClippedReLU.apply(l1(x), 6.0)), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(float(loss))
