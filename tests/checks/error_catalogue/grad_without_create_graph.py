"""element 0 of tensors does not require grad: a gradient penalty without create_graph=True."""

import torch

model = torch.nn.Linear(3, 1)
x = torch.randn(4, 3, requires_grad=True)
out = model(x).sum()
(grad,) = torch.autograd.grad(out, x)  # <- CAUSE
penalty = grad.pow(2).sum()
penalty.backward()  # <- ERROR
