"""data set to a tensor that requires gradients must be floating point or complex dtype"""

import torch

w = torch.randn(4, requires_grad=True)
w.data = torch.arange(4)  # <- CAUSE
