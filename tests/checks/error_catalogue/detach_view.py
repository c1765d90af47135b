"""Can't detach views in-place. Use detach() instead."""

import torch

w = torch.randn(4, requires_grad=True)
y = (w * 2)[:2]
y.detach_()  # <- CAUSE
