"""Case 948 - accumulation with a partial last window and zeroed (not None) gradients (correct)

Source: https://github.com/huggingface/accelerate/issues/435
        (the accumulation condition discussed there, written the way the
        maintainers fixed it, plus the last partial window of the epoch)
Category: correct (invariant 3)
EXPECT: no findings

Reported symptom:
    None. Micro-batches of 24 are accumulated 4 at a time; the last window of
    each epoch has only 2 micro-batches and is stepped too.

Root cause:
    None. The gradients are cleared with zero_grad(set_to_none=False) once
    before training and right after each step, so every step consumes exactly
    the backward calls of its own window.

Ground truth a good tool should report:
    Nothing. Several backward passes per step, zero tensors left in .grad, and
    a smaller last window are all intended.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

x = torch.randn(240, 6)
y = (x @ torch.randn(6, 3)).argmax(1)
model = nn.Sequential(nn.Linear(6, 32), nn.GELU(), nn.Linear(32, 3))
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
accumulation_steps = 4
micro_batches = [(x[i:i + 24], y[i:i + 24]) for i in range(0, 240, 24)]

optimizer.zero_grad(set_to_none=False)
for epoch in range(3):
    for step, (xb, yb) in enumerate(micro_batches):
        loss = F.cross_entropy(model(xb), yb) / accumulation_steps
        loss.backward()
        if (step + 1) % accumulation_steps == 0 or step + 1 == len(micro_batches):
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=False)

print(f"final loss {loss.item() * accumulation_steps:.4f}")
