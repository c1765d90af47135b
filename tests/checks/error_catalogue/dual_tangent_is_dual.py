"""Setting a forward grad that itself has a forward gradient at the same level"""

import torch
import torch.autograd.forward_ad as fwAD

x = torch.randn(3)
with fwAD.dual_level():
    tangent = fwAD.make_dual(torch.ones(3), torch.ones(3))
    dual = fwAD.make_dual(x, tangent)  # <- CAUSE
