"""Case 961 - one encoder layer registered once and applied at every depth (correct)

Source: https://github.com/espnet/espnet/issues/1278
        (one layer applied twelve times in a loop shares its weights across depth; the
        repeat helper builds twelve layers instead)
Category: correct (invariant 6)
EXPECT: no findings

Reported symptom:
    None. A cross-layer-sharing encoder (as in ALBERT or a universal transformer)
    registers one layer and applies it at every depth on purpose, next to a stack
    of independent layers built by a repeat helper.

Root cause:
    None. Sharing by calling one registered module several times is how weight
    sharing across depth is written; the repeat helper calls the layer factory once
    per layer, so the stack has independent layers.

Ground truth a good tool should report:
    Nothing.
"""
import torch
import torch.nn.functional as F

from model import SharedDepthEncoder

torch.manual_seed(0)

x = torch.randn(256, 10, 8)
y = x[..., 0].cumsum(1) / 3

model = SharedDepthEncoder()
optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)

for step in range(15):
    idx = torch.randint(0, 256, (32,))
    loss = F.mse_loss(model(x[idx]), y[idx])
    if step == 0:
        first = loss.item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"loss {first:.4f} -> {loss.item():.4f}")
