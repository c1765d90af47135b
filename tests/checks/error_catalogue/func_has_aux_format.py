"""grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) if has_aux is True"""

import torch


def loss_fn(w):
    return (w**2).sum()  # <- CAUSE


grads, aux = torch.func.grad(loss_fn, has_aux=True)(torch.randn(3))  # <- ERROR
