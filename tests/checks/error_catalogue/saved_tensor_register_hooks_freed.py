"""Calling register_hooks on a saved tensor after it has been freed."""

import torch

x = torch.randn(3, requires_grad=True)
y = x.pow(2)
y.sum().backward()
y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)  # <- CAUSE
