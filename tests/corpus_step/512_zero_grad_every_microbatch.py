"""Case 512 - zero_grad() inside every micro-batch wipes the accumulated gradient

Source: https://github.com/tientrandinh/Revisiting-Reverse-Distillation/issues/12
        "Is it something wrong with grad acc?"
Category: 3 - a step consumes exactly the gradients meant for it

Reported symptom:
    Training with accumulation_steps=4 behaves like training on a quarter of the
    data with a 4x smaller learning rate; raising accumulation_steps does not
    give the expected larger effective batch.

Root cause:
    optimizer.zero_grad() is called at the top of every iteration, before
    backward, while optimizer.step() only runs every accumulation_steps
    iterations. The gradients of the first three micro-batches of each window are
    erased, so each step consumes only the last micro-batch (divided by 4).

Ground truth a good tool should report:
    Each optimizer step consumes the gradient of one micro-batch instead of the
    accumulated window of 4; gradients are cleared inside the window by the
    `optimizer.zero_grad()` at the top of the loop (it belongs after step()).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

accumulation_steps = 4
x = torch.randn(640, 8)
y = x @ torch.randn(8, 1) + 0.1 * torch.randn(640, 1)

model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for i in range(40):
    xb, yb = x[i * 16:(i + 1) * 16], y[i * 16:(i + 1) * 16]
    optimizer.zero_grad()  # <- CAUSE
    loss = F.mse_loss(model(xb), yb) / accumulation_steps
    loss.backward()
    if (i + 1) % accumulation_steps == 0:
        optimizer.step()

print(f"final loss {loss.item() * accumulation_steps:.4f}")
