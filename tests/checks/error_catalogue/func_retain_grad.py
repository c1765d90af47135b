"""You are attempting to call Tensor.retain_grad() inside of a function being transformed by a functorch transform."""

import torch


def loss_fn(w):
    h = w * 2
    h.retain_grad()  # <- CAUSE
    return (h**2).sum()


grads = torch.func.grad(loss_fn)(torch.randn(3))
