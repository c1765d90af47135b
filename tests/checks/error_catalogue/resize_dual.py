"""cannot resize variables that has a forward grad"""

import torch
import torch.autograd.forward_ad as fwAD

with fwAD.dual_level():
    x = fwAD.make_dual(torch.randn(6), torch.ones(6))
    x.resize_(2, 3)  # <- CAUSE
