"""gradients can be either Tensors or None, but got float"""

import torch

w = torch.randn(3, requires_grad=True)
loss_a = (w**2).sum()
loss_b = w.abs().sum()
torch.autograd.backward([loss_a, loss_b], [1.0, 0.5])  # <- CAUSE,ERROR
