"""hook 'scale_grads' has returned an incorrect number of values (got 3, but expected 2)"""

import torch

x = torch.randn(3, requires_grad=True)
y = x * x


def scale_grads(grad_inputs, grad_outputs):
    return grad_inputs[0] * 0.5, grad_inputs[1], grad_outputs[0]  # <- CAUSE


y.grad_fn.register_hook(scale_grads)
y.sum().backward()  # <- ERROR
