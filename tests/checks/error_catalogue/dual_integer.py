"""Expected primal to be floating point or complex, but got: Long"""

import torch
import torch.autograd.forward_ad as fwAD

steps = torch.arange(5)
with fwAD.dual_level():
    dual = fwAD.make_dual(steps, torch.ones(5))  # <- CAUSE
