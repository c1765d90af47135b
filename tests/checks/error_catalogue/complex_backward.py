"""grad can be implicitly created only for real scalar outputs (a complex loss)."""

import torch

w = torch.randn(3, dtype=torch.cfloat, requires_grad=True)
loss = (w * 2).sum()  # <- CAUSE
loss.backward()  # <- ERROR
