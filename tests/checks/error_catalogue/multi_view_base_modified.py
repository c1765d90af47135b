"""Output 0 of Unbind is a view and its base or another view of its base has been modified."""

import torch

w = torch.randn(4, requires_grad=True)
y = w * 2
a, b, c, d = y.unbind()
y.add_(1)  # <- CAUSE
print(a * 2)  # <- ERROR
