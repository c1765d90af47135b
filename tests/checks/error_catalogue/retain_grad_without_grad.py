"""can't retain_grad on Tensor that has requires_grad=False"""

import torch

x = torch.randn(4, 3)
h = x * 2
h.retain_grad()  # <- CAUSE
