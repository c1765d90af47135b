"""grad_dtype can only be set on leaf tensors."""

import torch

w = torch.randn(3, requires_grad=True)
h = w * 2
h.grad_dtype = torch.float64  # <- CAUSE
