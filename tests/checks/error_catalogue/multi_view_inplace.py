"""Output 0 of Split is a view and is being modified inplace (a function returning views)."""

import torch

w = torch.randn(4, requires_grad=True)
gates = w * 2
i, f = gates.chunk(2)
i.sigmoid_()  # <- CAUSE
