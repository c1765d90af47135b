"""Only Tensors of floating point and complex dtype can require gradients."""

import torch

t = torch.tensor([1, 2, 3], requires_grad=True)  # <- CAUSE
