"""Can't call apply_() on Variable that requires grad. Use var.detach().apply_() instead."""

import torch

w = torch.randn(4, requires_grad=True)
w.apply_(lambda v: min(v, 1.0))  # <- CAUSE
