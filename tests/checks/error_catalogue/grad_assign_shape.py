"""attempting to assign a gradient of size '[1, 3]' to a tensor of size '[3]'. Please ensure that the gradient and the tensor are the same size"""

import torch

w = torch.randn(3, requires_grad=True)
w.grad = torch.zeros(1, 3)  # <- CAUSE
