"""grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got <class 'float'>"""

import torch


def loss_fn(w):
    return (w**2).sum().item()  # <- CAUSE


grads = torch.func.grad(loss_fn)(torch.randn(3))  # <- ERROR
