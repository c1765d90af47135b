"""one of the variables needed for gradient computation has been modified by an inplace op."""

import torch

w = torch.randn(3, requires_grad=True)
y = w.exp()  # <- SAVED
y.add_(1)  # <- CAUSE
y.sum().backward()  # <- ERROR
