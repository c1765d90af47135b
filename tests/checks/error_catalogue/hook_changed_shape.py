"""hook 'hook' has changed the size of value."""

import torch

w = torch.randn(3, requires_grad=True)
y = w * 2


def hook(grad):
    return grad.sum()  # <- CAUSE


y.register_hook(hook)  # <- REGISTERED
y.sum().backward()  # <- ERROR
