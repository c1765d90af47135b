"""If `is_grads_batched=True`, we interpret the first dimension of each grad_output as batch."""

import torch

a = torch.randn(3, requires_grad=True)
y = a * 2  # <- CREATED
torch.autograd.grad(y, a, torch.ones(3), is_grads_batched=True)  # <- CAUSE
