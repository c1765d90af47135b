"""Case 905 - gradient accumulation done right (correct)

Source: https://github.com/rasbt/LLMs-from-scratch/issues/299
        "if (batch_idx + 1) % accumulation_steps == 0 or (batch_idx + 1) == len(train_loader):"
Category: correct (invariant 3)
EXPECT: no findings

Reported symptom:
    None. Micro-batches of 16 are accumulated into effective batches of 64.

Root cause:
    None. Each micro-batch loss is divided by accumulation_steps, gradients are
    only cleared right after a step, the step happens on (i + 1) %
    accumulation_steps == 0 or on the last micro-batch, so every step consumes
    exactly one full window.

Ground truth a good tool should report:
    Nothing. Several backward passes per step are intended here.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

accumulation_steps = 4
x = torch.randn(704, 8)
y = x @ torch.randn(8, 1) + 0.1 * torch.randn(704, 1)
batches = [(x[i:i + 16], y[i:i + 16]) for i in range(0, 704, 16)]

model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

optimizer.zero_grad()
for i, (xb, yb) in enumerate(batches):
    loss = F.mse_loss(model(xb), yb)
    if i == 0:
        first = loss.item()
    (loss / accumulation_steps).backward()
    if (i + 1) % accumulation_steps == 0 or (i + 1) == len(batches):
        optimizer.step()
        optimizer.zero_grad()

print(f"loss {first:.4f} -> {loss.item():.4f}")
