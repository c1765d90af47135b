"""attempting to assign a gradient with dtype 'double' to a tensor with dtype 'float'. Please ensure that the gradient and the tensor have the same dtype"""

import torch

w = torch.randn(3, requires_grad=True)
w.grad = torch.zeros(3, dtype=torch.float64)  # <- CAUSE
