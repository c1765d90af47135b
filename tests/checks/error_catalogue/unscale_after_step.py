"""unscale_() is being called after step()."""

import torch

model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
loss = model(torch.randn(4, 3)).sum()
scaler.scale(loss).backward()
scaler.step(opt)
scaler.unscale_(opt)  # <- CAUSE
scaler.update()
