"""gradcheck expects at least one input tensor to require gradient, but none of them have requires_grad=True."""

import torch

x = torch.randn(4, dtype=torch.float64)  # <- CAUSE
torch.autograd.gradcheck(torch.sin, (x,))  # <- ERROR
