"""Case 523 - model loader sets the default dtype to bfloat16 and never restores it

Source: https://github.com/vllm-project/vllm/pull/971
        "Modifying the global state is unexpected and can lead to issues later (regarding eg. precision or when testing)."
Category: 5 - global switches are scoped

Reported symptom:
    A small fp32 head trained on top of a frozen bf16 backbone barely learns: the
    loss moves in the third decimal and most head weights are bit-for-bit
    unchanged after dozens of Adam steps.

Root cause:
    load_backbone() calls torch.set_default_dtype(torch.bfloat16) so that the
    backbone is materialised directly in bf16, but never restores the previous
    default. Every tensor and module created afterwards - the new head, the
    training data - is bf16, and with lr=1e-4 most Adam updates are smaller than
    half a bf16 ulp of the weights, so they round away to nothing.

Ground truth a good tool should report:
    The default dtype is bfloat16 for the whole training run (head parameters are
    bf16 and most steps leave them unchanged); it was set globally and not
    restored in loader.py (the `torch.set_default_dtype(dtype)` line).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from loader import load_backbone

torch.manual_seed(0)

backbone = load_backbone()
head = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
optimizer = torch.optim.Adam(head.parameters(), lr=1e-4)

x = torch.randn(256, 32)
y = (x @ (torch.randn(32, 4) * 0.1)).argmax(1)
before = [p.detach().clone() for p in head.parameters()]

for step in range(60):
    with torch.no_grad():
        feats = backbone(x)
    loss = F.cross_entropy(head(feats), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

changed = sum((p != q).sum().item() for p, q in zip(head.parameters(), before))
total = sum(p.numel() for p in before)
print(f"head dtype {head[0].weight.dtype}; weights changed {changed}/{total}")
print(f"final loss {loss.item():.4f}")
