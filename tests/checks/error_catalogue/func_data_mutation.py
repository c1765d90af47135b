"""mutating directly with `.data` inside functorch transform is not allowed."""

import torch


def loss_fn(w):
    w.data = w.data.clamp(-1, 1)  # <- CAUSE
    return (w**2).sum()


grads = torch.func.grad(loss_fn)(torch.randn(3))
