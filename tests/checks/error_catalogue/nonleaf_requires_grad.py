"""you can only change requires_grad flags of leaf variables."""

import torch

w = torch.randn(3, requires_grad=True)
y = w * 2
y.requires_grad = False  # <- CAUSE
