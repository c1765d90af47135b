"""The 0th input has a dimension with stride 0. gradcheck only supports inputs that are ..."""

import torch

base = torch.randn(1, 5, dtype=torch.float64)
x = base.expand(4, 5).requires_grad_()  # <- CAUSE
torch.autograd.gradcheck(torch.tanh, (x,))  # <- ERROR
