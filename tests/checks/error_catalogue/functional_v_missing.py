"""The vector v can only be None if the user-provided function returns a single Tensor with a single element."""

import torch

out, vjp = torch.autograd.functional.vjp(torch.sin, torch.randn(3))  # <- CAUSE
