"""cannot resize variables that require grad"""

import torch

w = torch.randn(6, requires_grad=True)
w.resize_(2, 3)  # <- CAUSE
