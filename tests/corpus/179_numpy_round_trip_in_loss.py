"""Case 179 - a post-processing step done in NumPy inside the loss.

Source: a frequent discuss.pytorch.org report (paraphrased): "element 0 of tensors does not
require grad" after using numpy in the loss.
Root cause: `.detach().numpy()` leaves autograd; torch.from_numpy gives a tensor with no
graph. Do the operation in torch.
"""
import numpy as np
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(4, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, target = torch.randn(6, 4), torch.rand(6, 3)
probs = torch.from_numpy(np.exp(model(x).detach().numpy()))  # <- CAUSE
loss = ((probs / probs.sum(1, keepdim=True)) - target).pow(2).mean()
opt.zero_grad()
loss.backward()  # <- ERROR
opt.step()
