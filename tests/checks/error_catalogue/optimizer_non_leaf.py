"""can't optimize a non-leaf Tensor"""

import torch

weights = torch.randn(16, 4, requires_grad=True) * 0.01  # <- CAUSE
bias = torch.zeros(4, requires_grad=True)
optimizer = torch.optim.SGD([weights, bias], lr=0.1)  # <- ERROR
