"""No inf checks were recorded for this optimizer."""

import torch

model = torch.nn.Linear(3, 1)
head = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(head.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
loss = model(torch.randn(4, 3)).sum()
scaler.scale(loss).backward()
scaler.step(opt)  # <- CAUSE
scaler.update()
