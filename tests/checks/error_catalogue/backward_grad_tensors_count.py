"""got 2 tensors and 1 gradients"""

import torch

w = torch.randn(3, requires_grad=True)
a = (w * 2).sum()
b = (w**2).sum()
torch.autograd.backward([a, b], [torch.tensor(1.0)])  # <- ERROR
