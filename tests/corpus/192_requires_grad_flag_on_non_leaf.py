"""Case 192 - requires_grad switched off on an intermediate result to freeze a branch.

Source: a frequent discuss.pytorch.org report (paraphrased): "you can only change
requires_grad flags of leaf variables".
Root cause: the output of a layer is not a leaf; freezing is done on parameters
(layer.requires_grad_(False)) or with .detach().
"""
import torch
from torch import nn

torch.manual_seed(0)
frozen, head = nn.Linear(4, 4), nn.Linear(4, 1)
h = frozen(torch.randn(2, 4))
h.requires_grad = False  # <- CAUSE
loss = head(h).sum()
loss.backward()
