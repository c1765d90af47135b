"""Gradient accumulation over 4 micro-batches with the loss divided by 4, zero_grad right
after each step, and an evaluation under no_grad every 2 steps in eval mode (correct)."""

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 32), nn.Dropout(0.1), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
accum = 4
opt.zero_grad(set_to_none=True)
for i in range(16):
    x, y = torch.randn(8, 10), torch.randn(8, 1)
    loss = nn.functional.mse_loss(model(x), y) / accum
    loss.backward()
    if (i + 1) % accum == 0:
        opt.step()
        opt.zero_grad(set_to_none=True)
        if (i + 1) % (2 * accum) == 0:
            model.eval()
            with torch.no_grad():
                val = nn.functional.mse_loss(model(torch.randn(32, 10)), torch.randn(32, 1))
            model.train()
            print(float(val))
