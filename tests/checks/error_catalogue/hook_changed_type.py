"""hook 'hook' has changed the type of value (was torch.FloatTensor got torch.DoubleTensor)."""

import torch

w = torch.randn(3, requires_grad=True)
y = w * 2


def hook(grad):
    return grad.double()  # <- CAUSE


y.register_hook(hook)  # <- REGISTERED
y.sum().backward()  # <- ERROR
