"""A reentrant checkpoint over a first block whose input needs no gradient: the block's parameters never get one (torch's test_utils: test_checkpoint_no_tensors / rng tests)."""

import torch
from torch.utils.checkpoint import checkpoint

block = torch.nn.Linear(4, 4)
head = torch.nn.Linear(4, 1)
x = torch.randn(2, 4)
h = checkpoint(block, x, use_reentrant=True)  # <- CAUSE
head(h).sum().backward()
print(block.weight.grad)
