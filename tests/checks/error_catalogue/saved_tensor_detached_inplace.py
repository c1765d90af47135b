"""Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."""

import torch

w = torch.randn(3, requires_grad=True)
h = w * 2
loss = (h * h).sum()
h.detach_()
loss.backward()  # <- ERROR
