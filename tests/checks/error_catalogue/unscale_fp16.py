"""Attempting to unscale FP16 gradients."""

import torch

model = torch.nn.Linear(3, 1).half()  # <- CAUSE
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
loss = model(torch.randn(4, 3).half()).float().sum()
scaler.scale(loss).backward()
scaler.step(opt)  # <- ERROR
scaler.update()
