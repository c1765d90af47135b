"""attempting to assign a gradient with device type 'meta' to a tensor with device type 'cpu'. Please ensure that the gradient and the tensor are on the same device"""

import torch

w = torch.randn(3, requires_grad=True)
w.grad = torch.zeros(3, device="meta")  # <- CAUSE
