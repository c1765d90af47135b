"""Trying to use forward AD with special_zeta that does not support it because it has not been implemented yet."""

import torch
import torch.autograd.forward_ad as fwAD

s = torch.linspace(2.0, 4.0, 5)
with fwAD.dual_level():
    dual = fwAD.make_dual(s, torch.ones(5))
    out = torch.special.zeta(dual, 1.5)  # <- CAUSE
