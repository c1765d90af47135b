"""grad can be implicitly created only for scalar outputs."""

import torch

w = torch.randn(3, requires_grad=True)
out = w * 2  # <- CAUSE
out.backward()  # <- ERROR
