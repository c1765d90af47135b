"""the derivative for 'zeta' is not implemented."""

import torch

s = torch.linspace(2.0, 4.0, 5, requires_grad=True)
q = torch.full((5,), 1.5)
loss = torch.special.zeta(s, q).sum()  # <- CAUSE
loss.backward()  # <- ERROR
