"""Trying to backward through the graph a second time: the first backward freed it."""

import torch

w = torch.randn(3, requires_grad=True)
loss = (w.exp() * 2).sum()
loss.backward()  # <- CAUSE
loss.backward()  # <- ERROR
