"""backward() called inside a functorch transform. This is not supported, please use functorch.grad or functorch.vjp instead or call backward() outside of functorch transforms."""

import torch


def loss_fn(w):
    loss = (w**2).sum()
    loss.backward()  # <- CAUSE,ERROR
    return loss


grads = torch.func.grad(loss_fn)(torch.randn(3))
