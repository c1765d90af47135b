"""Nested forward mode AD is not supported at the moment"""

import torch
import torch.autograd.forward_ad as fwAD

x = torch.randn(3)
with fwAD.dual_level():
    dual = fwAD.make_dual(x, torch.ones(3))
    with fwAD.dual_level():  # <- CAUSE
        inner = fwAD.make_dual(dual, torch.ones(3))
