"""Closure use is not currently supported if GradScaler is enabled."""

import torch

model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
x = torch.randn(4, 3)


def closure():
    optimizer.zero_grad()
    loss = model(x).pow(2).mean()
    scaler.scale(loss).backward()
    return loss


scaler.step(optimizer, closure=closure)  # <- CAUSE
