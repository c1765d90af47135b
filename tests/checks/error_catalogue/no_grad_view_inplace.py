"""A view was created in no_grad mode and is being modified inplace with grad mode enabled."""

import torch

w = torch.randn(4, requires_grad=True)
y = w * 2
with torch.no_grad():
    v = y[:2]
v.mul_(2)  # <- CAUSE
