"""none of output has requires_grad=True, this checkpoint() is not necessary"""

import torch
from torch.utils.checkpoint import checkpoint

layer = torch.nn.Linear(3, 3)


def block(x):
    with torch.no_grad():
        return layer(x).relu()


x = torch.randn(2, 3, requires_grad=True)
h = checkpoint(block, x, use_reentrant=True)  # <- CAUSE
h.sum().backward()  # <- ERROR
