"""Case 662 - scaling the query in place after unbinding a fused QKV projection

Source: pytorch/pytorch test/test_autograd.py, test_autograd_views_codegen (assertRaisesRegex 'Output 0 of UnbindBackward is a view and is being modified inplace')
Category: views + in-place

Reported symptom:
    RuntimeError: Output 0 of Unbind is a view and is being modified inplace. This view is the output of a function that returns multiple views. Such functions do not allow the output views to be modified inplace. You should replace the inplace operation by an out-of-place one.

Root cause:
    The attention layer splits the fused qkv tensor with `unbind`, which
    returns several views of the same base. Autograd cannot rebase the history
    of one output of a multi-view function, so modifying `q` in place
    (`q *= self.scale`) is forbidden.

Ground truth a good tool should report:
    The in-place `q *= self.scale` (CAUSE/ERROR) modifies a view returned by
    unbind (CREATED); use `q = q * self.scale`.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class SelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        qkv = self.qkv(x).reshape(b, t, 3, self.heads, d // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # <- CREATED
        q *= self.scale  # <- CAUSE,ERROR
        attn = (q @ k.transpose(-2, -1)).softmax(-1)
        out = (attn @ v).transpose(1, 2).reshape(b, t, d)
        return self.proj(out)


model = nn.Sequential(SelfAttention(16, 4), nn.LayerNorm(16), nn.Linear(16, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(2, 6, 16)
y = torch.randn(2, 6, 1)

for step in range(2):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    print("step", step, "loss", loss.item())
