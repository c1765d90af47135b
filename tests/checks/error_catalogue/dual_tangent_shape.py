"""Trying to set a forward gradient that has a different size than that of the original Tensor, this is not supported. Tensor is of size [3] while the given forward gradient is of size [1, 3]."""

import torch
import torch.autograd.forward_ad as fwAD

x = torch.randn(3)
with fwAD.dual_level():
    dual = fwAD.make_dual(x, torch.ones(1, 3))  # <- CAUSE
