"""No inf checks were recorded prior to update."""

import torch

model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
loss = model(torch.randn(4, 3)).sum()
scaler.scale(loss).backward()
opt.step()
scaler.update()  # <- CAUSE
