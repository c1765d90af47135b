"""When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad()."""

import torch
from torch.utils.checkpoint import checkpoint

layer = torch.nn.Linear(3, 3)
x = torch.randn(2, 3, requires_grad=True)
out = checkpoint(layer, x, use_reentrant=True)
torch.autograd.grad(out.sum(), x)  # <- CAUSE
