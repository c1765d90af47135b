"""Mismatch in shape: grad_output[0] has a shape of ... and output[0] has a shape of ..."""

import torch

a = torch.randn(3, requires_grad=True)
y = a * 2  # <- CREATED
y.backward(torch.ones(4))  # <- CAUSE
