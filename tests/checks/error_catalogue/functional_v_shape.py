"""Mismatch in sizes between v and the outputs of the user-provided function. v has invalid size: should be torch.Size([3]) but got torch.Size([1, 3])."""

import torch

out, vjp = torch.autograd.functional.vjp(torch.sin, torch.randn(3), torch.ones(1, 3))  # <- CAUSE
