"""Calling register_hooks on a saved tensor whose hooks have already been set."""

import torch

x = torch.randn(3, requires_grad=True)
y = x.pow(2)
y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
y.grad_fn._raw_saved_self.register_hooks(lambda t: t * 2, lambda t: t)  # <- CAUSE
