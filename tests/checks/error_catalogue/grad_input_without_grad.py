"""One of the differentiated Tensors does not require grad."""

import torch

a = torch.randn(3, requires_grad=True)
b = torch.randn(3)  # <- CAUSE
loss = (a * b).sum()
torch.autograd.grad(loss, [a, b])  # <- ERROR
