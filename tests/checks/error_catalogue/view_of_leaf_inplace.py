"""a view of a leaf Variable that requires grad is being used in an in-place operation."""

import torch

w = torch.randn(3, requires_grad=True)
w[0].mul_(2)  # <- CAUSE
