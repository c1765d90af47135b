"""Making a dual Tensor based on a Tensor that already has a forward gradient at the same level"""

import torch
import torch.autograd.forward_ad as fwAD

x = torch.randn(3)
tangent = torch.ones(3)
with fwAD.dual_level():
    dual = fwAD.make_dual(x, tangent)
    again = fwAD.make_dual(dual, tangent)  # <- CAUSE
