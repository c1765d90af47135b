"""Trying to create a dual Tensor for forward AD but no level exists, make sure to enter_dual_level() first."""

import torch
import torch.autograd.forward_ad as fwAD

x = torch.randn(3)
dual = fwAD.make_dual(x, torch.ones(3))  # <- CAUSE
