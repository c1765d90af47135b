"""leaf variable has been moved into the graph interior."""

import torch

a = torch.randn(3, requires_grad=True)
b = a * 2
a.requires_grad_(False)
c = torch.randn(3, requires_grad=True)
a.mul_(c)  # <- CAUSE
b.sum().backward()  # <- ERROR
