"""Case 200 - the optimizer built on a deep copy of the model, the original trained.

Source: a frequent report (paraphrased): "my model does not learn" after adding an EMA /
copy of the model.
Root cause: the optimizer holds the copy's parameters; the loss is computed with the
original, whose gradients are never applied.
"""
import copy

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
ema = copy.deepcopy(model)
opt = torch.optim.SGD(ema.parameters(), lr=0.1)  # <- CAUSE
for step in range(3):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(float(loss))
