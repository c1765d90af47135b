"""can't assign Variable as its own grad"""

import torch

w = torch.randn(3, requires_grad=True)
w.grad = w  # <- CAUSE
