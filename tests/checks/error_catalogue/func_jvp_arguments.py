"""jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid to call f(*primals)."""

import torch

x = torch.randn(3)
out, tangent_out = torch.func.jvp(torch.sin, x, torch.ones(3))  # <- CAUSE
