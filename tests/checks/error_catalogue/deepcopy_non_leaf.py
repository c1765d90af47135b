"""Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment."""

import copy

import torch

w = torch.randn(3, requires_grad=True)
scaled = w * 2
snapshot = copy.deepcopy(scaled)  # <- CAUSE
