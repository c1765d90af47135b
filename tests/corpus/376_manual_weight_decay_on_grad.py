"""L2 regularisation added to the gradients by hand between backward and step (correct:
the gradients are modified in place on purpose, then used)."""

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 20), nn.Tanh(), nn.Linear(20, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(5):
    x, y = torch.randn(32, 10), torch.randn(32, 1)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.grad is not None and name.endswith("weight"):
                p.grad.add_(p, alpha=1e-4)
    opt.step()
print(float(loss))
