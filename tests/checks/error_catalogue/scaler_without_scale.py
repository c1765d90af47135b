"""Attempted unscale_ but _scale is None.  This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."""

import torch

model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
loss = model(torch.randn(4, 3)).sum()
loss.backward()  # <- CAUSE
scaler.step(opt)  # <- ERROR
scaler.update()
