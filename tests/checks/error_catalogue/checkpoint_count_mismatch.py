"""torch.utils.checkpoint: A different number of tensors was saved during forward and recompute."""

import torch
from torch.utils.checkpoint import checkpoint

calls = [0]


def block(x):
    calls[0] += 1  # <- CAUSE
    if calls[0] == 1:
        return (x.sin() * x.cos()).sum()
    return x.sin().sum()


w = torch.randn(3, requires_grad=True)
loss = checkpoint(block, w, use_reentrant=False)
loss.backward()  # <- ERROR
