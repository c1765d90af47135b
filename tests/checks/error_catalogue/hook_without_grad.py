"""cannot register a hook on a tensor that doesn't require gradient."""

import torch

t = torch.randn(3)
t.register_hook(lambda grad: grad * 2)  # <- CAUSE
