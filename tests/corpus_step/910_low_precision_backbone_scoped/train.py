"""Case 910 - bf16 backbone built with the default dtype restored, autocast scoped (correct)

Source: https://github.com/pytorch/pytorch/issues/120819
        "to set a dtype and restore the previous dtype"
Category: correct (invariant 5)
EXPECT: no findings

Reported symptom:
    None. A frozen backbone is materialised in bfloat16 and a float32 head is
    trained on its features.

Root cause:
    None. load_backbone() changes the default dtype only inside try/finally and
    restores the previous one; the bf16 backbone runs inside a
    torch.autocast("cpu") block whose scope ends before the head; the head, its
    optimizer and the loss are float32.

Ground truth a good tool should report:
    Nothing. Both global switches are restored before training code runs.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from loader import extract, load_backbone

torch.manual_seed(0)

backbone = load_backbone()
head = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
optimizer = torch.optim.Adam(head.parameters(), lr=1e-3)

x = torch.randn(256, 32)
y = (x @ (torch.randn(32, 4) * 0.1)).argmax(1)

for step in range(60):
    loss = F.cross_entropy(head(extract(backbone, x)), y)
    if step == 0:
        first = loss.item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"head dtype {head[0].weight.dtype}; loss {first:.4f} -> {loss.item():.4f}")
