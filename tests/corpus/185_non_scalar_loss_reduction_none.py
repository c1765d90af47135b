"""Case 185 - a per-element loss (reduction='none') backpropagated directly.

Source: a frequent discuss.pytorch.org report (paraphrased): "grad can be implicitly created
only for scalar outputs".
Root cause: the criterion was built with reduction='none' (for a mask applied later that
was dropped); backward() needs a scalar: reduce the loss (.mean()) or keep the default.
"""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
criterion = nn.MSELoss(reduction="none")  # <- CAUSE
x, y = torch.randn(8, 4), torch.randn(8, 1)
loss = criterion(model(x), y)  # <- CAUSE: or reduce here (.mean())
loss.backward()  # <- ERROR
