"""assigned grad expected to be a Tensor or None but got grad of type float"""

import torch

w = torch.randn(3, requires_grad=True)
w.grad = 0.0  # <- CAUSE
