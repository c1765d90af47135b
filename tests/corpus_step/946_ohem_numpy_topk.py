"""Case 946 - online hard example mining with NumPy indices (correct)

Source: https://github.com/kuangliu/torchcv/issues/46
        "why with hard_example_mining use this?"
Category: correct (invariant 8)
EXPECT: no findings

Reported symptom:
    None. Per-sample losses are ranked on a NumPy copy; the hardest 25 % are kept
    and only they are averaged into the loss that is backpropagated.

Root cause:
    None. The NumPy copy only chooses which samples count: the kept values are
    indexed from the per-sample loss tensor itself, which still has its graph.
    The mean loss of the batch is logged with .item() and float().

Ground truth a good tool should report:
    Nothing.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

net = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 3))
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
x_all = torch.randn(600, 12)
y_all = x_all[:, :3].argmax(1)

running = []
for step in range(40):
    idx = torch.randint(0, 600, (64,))
    per_sample = F.cross_entropy(net(x_all[idx]), y_all[idx], reduction="none")
    ranked = np.argsort(-per_sample.detach().cpu().numpy())
    keep = torch.from_numpy(ranked[: len(ranked) // 4].copy())
    loss = per_sample[keep].mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    running.append(float(per_sample.mean()))

print(f"hard loss {loss.item():.4f}, batch loss {np.mean(running[-5:]):.4f}")
