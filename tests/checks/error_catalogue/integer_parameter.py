"""Only Tensors of floating point and complex dtype can require gradients (nn.Parameter)."""

import torch

p = torch.nn.Parameter(torch.arange(3))  # <- CAUSE
