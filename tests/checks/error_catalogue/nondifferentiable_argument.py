"""The function 'binary_cross_entropy' is not differentiable with respect to argument 'weight'. This input cannot have requires_grad True."""

import torch
import torch.nn.functional as F

probs = torch.rand(8, requires_grad=True)
target = torch.randint(0, 2, (8,)).float()
class_weight = torch.ones(8, requires_grad=True)
loss = F.binary_cross_entropy(probs, target, weight=class_weight)  # <- CAUSE
