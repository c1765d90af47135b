"""Case 908 - per-iteration warmup + cosine schedule with no-decay groups (correct)

Source: https://github.com/karpathy/nanoGPT/pull/578
        "Uses (it + 1)/(warmup_iters + 1) instead of it/warmup_iters"
Category: correct (invariant 4)
EXPECT: no findings

Reported symptom:
    None. AdamW with weight decay on matrices only, and a LambdaLR schedule that
    is designed to be stepped once per iteration (short linear warmup that never
    hits lr 0, then cosine decay to 10 % of the peak).

Root cause:
    None. The scheduler is stepped per iteration because its lambda is written in
    iterations; biases and LayerNorm weights sit in a zero-decay group.

Ground truth a good tool should report:
    Nothing.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(12, 64), nn.LayerNorm(64), nn.GELU(), nn.Linear(64, 1))
decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
optimizer = torch.optim.AdamW(
    [{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0}], lr=1e-2
)

total, warmup = 60, 5


def lr_lambda(it):
    if it < warmup:
        return (it + 1) / (warmup + 1)
    progress = (it - warmup) / (total - warmup)
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))


scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)

x = torch.randn(512, 12)
y = torch.sin(x[:, :1] * 2) + x[:, 1:2] * x[:, 2:3]

for it in range(total):
    idx = torch.randint(0, 512, (64,))
    loss = F.mse_loss(model(x[idx]), y[idx])
    if it == 0:
        first = loss.item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()

print(f"loss {first:.4f} -> {loss.item():.4f}  final lr {scheduler.get_last_lr()[0]:.2e}")
