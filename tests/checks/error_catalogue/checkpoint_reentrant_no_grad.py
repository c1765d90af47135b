"""None of the inputs have requires_grad=True (reentrant checkpoint), then element 0 ..."""

import torch
from torch.utils.checkpoint import checkpoint

layer = torch.nn.Linear(3, 3)
x = torch.randn(2, 3)
out = checkpoint(layer, x, use_reentrant=True)  # <- CAUSE,CREATED
out.sum().backward()  # <- ERROR
