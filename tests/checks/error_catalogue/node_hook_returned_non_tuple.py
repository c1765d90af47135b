"""expected tuple, but hook returned 'Tensor'"""

import torch

x = torch.randn(3, requires_grad=True)
y = x * 2


def scale_grads(grad_inputs, grad_outputs):
    return grad_inputs[0] * 0.5  # <- CAUSE


y.grad_fn.register_hook(scale_grads)
y.sum().backward()  # <- ERROR
