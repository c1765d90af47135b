"""Case 628 - projection layer writing into a preallocated buffer with out=

Source: pytorch/pytorch test/test_autograd.py, test_out_variant_raises_when_inputs_require_grad (assertRaisesRegex "out=")
Category: out-variant

Reported symptom:
    RuntimeError: matmul(): functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad.

Root cause:
    To avoid an allocation per call, CachedProjection.forward computes
    torch.matmul(x, self.weight, out=self.buf). out= variants are not differentiable;
    since self.weight is a Parameter that requires grad, the op refuses to run with
    grad mode on.

Ground truth a good tool should report:
    The `torch.matmul(..., out=self.buf)` line in CachedProjection.forward: use the
    out-of-place `x @ self.weight`.
"""
import torch
from torch import nn

torch.manual_seed(0)


class CachedProjection(nn.Module):
    def __init__(self, d_in, d_out, batch):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d_in, d_out) * 0.1)
        self.register_buffer("buf", torch.empty(batch, d_out))

    def forward(self, x):
        torch.matmul(x, self.weight, out=self.buf)  # <- CAUSE,ERROR
        return self.buf


proj = CachedProjection(10, 4, batch=8)
opt = torch.optim.SGD(proj.parameters(), lr=0.1)
x, y = torch.randn(8, 10), torch.randn(8, 4)
for step in range(3):
    loss = (proj(x) - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
