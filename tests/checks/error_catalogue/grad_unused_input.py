"""The differentiated Tensor at index 1 appears to not have been used in the graph."""

import torch

a = torch.randn(3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
loss = (a * 2).sum()
torch.autograd.grad(loss, [a, b])  # <- CAUSE
