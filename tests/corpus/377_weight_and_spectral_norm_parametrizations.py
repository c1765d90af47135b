"""Layers under weight_norm and spectral_norm parametrizations, trained normally (correct)."""

import torch
from torch import nn
from torch.nn.utils import parametrizations

torch.manual_seed(0)
model = nn.Sequential(
    parametrizations.weight_norm(nn.Linear(8, 16)),
    nn.ReLU(),
    parametrizations.spectral_norm(nn.Linear(16, 1)),
)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(5):
    x, y = torch.randn(16, 8), torch.randn(16, 1)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(float(loss))
