"""can't replace a None gradient with a non-None value"""

import torch

x = torch.randn(3, requires_grad=True)
y = x * 2


def fill(grad_inputs, grad_outputs):
    return tuple(torch.zeros(3) for _ in grad_inputs)  # <- CAUSE


y.grad_fn.register_hook(fill)
y.sum().backward()  # <- ERROR
