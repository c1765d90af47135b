"""Attempted to call `variable.set_data(tensor)`, but `variable` and `tensor` have incompatible tensor type."""

import torch

w = torch.nn.Parameter(torch.randn(4, 4))
w.data = w.data.to_sparse()  # <- CAUSE
