"""It is not possible to get the gradient edge for a Tensor that does not require gradients"""

import torch
from torch.autograd.graph import get_gradient_edge

x = torch.randn(4, 3)
h = x * 2
edge = get_gradient_edge(h)  # <- CAUSE
