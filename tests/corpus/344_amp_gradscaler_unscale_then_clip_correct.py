"""Correct 344 - mixed precision with GradScaler: scale, backward, unscale_, clip, step, update

Source: "Working with Unscaled Gradients" in https://pytorch.org/docs/stable/notes/amp_examples.html
        (the fix applied in https://github.com/milesial/Pytorch-UNet/pull/470)
Category: correct script (AMP gradient scaling)

What it does:
    A small transformer-style block trained under CPU autocast (bfloat16) with
    torch.amp.GradScaler("cpu").  Gradients are unscaled in place with
    `scaler.unscale_(optimizer)` before clip_grad_norm_ reads them, so the clip sees
    true norms; `scaler.step` then skips its own unscale and `scaler.update()` runs
    once per iteration.  The gradient norm is logged from the clip's return value.

Ground truth a good tool should report:
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        iter 0: loss 1.7417 true grad norm 0.8336 scale 65536.0
        iter 1: loss 1.6416 true grad norm 0.7961 scale 65536.0
        iter 2: loss 1.5464 true grad norm 0.7677 scale 65536.0
        iter 3: loss 1.4557 true grad norm 0.7493 scale 65536.0
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, d=32, n_classes=6):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, num_heads=4, batch_first=True)
        self.norm1 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 64), nn.GELU(), nn.Linear(64, d))
        self.norm2 = nn.LayerNorm(d)
        self.cls = nn.Linear(d, n_classes)

    def forward(self, x):
        a, _ = self.attn(x, x, x, need_weights=False)
        x = self.norm1(x + a)
        x = self.norm2(x + self.ff(x))
        return self.cls(x.mean(dim=1))


model = Block()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
scaler = torch.amp.GradScaler("cpu")
x = torch.randn(8, 10, 32)
y = torch.randint(0, 6, (8,))

for it in range(4):
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(x)
    loss = F.cross_entropy(logits.float(), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    scaler.step(optimizer)
    scaler.update()
    print(f"iter {it}: loss {loss.item():.4f} true grad norm {grad_norm.item():.4f} scale {scaler.get_scale()}")
