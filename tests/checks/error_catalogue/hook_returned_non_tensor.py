"""expected Variable, but hook returned 'float'"""

import torch

w = torch.randn(3, requires_grad=True)
w.register_hook(lambda grad: grad.norm().item())  # <- CAUSE
(w * 2).sum().backward()  # <- ERROR
