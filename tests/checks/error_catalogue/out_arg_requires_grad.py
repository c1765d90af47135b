"""add(): functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad."""

import torch

w = torch.randn(3, requires_grad=True)
buffer = torch.empty(3)
torch.add(w, 1.0, out=buffer)  # <- CAUSE
