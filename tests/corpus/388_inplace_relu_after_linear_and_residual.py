"""In-place activations where they are safe (ReLU(inplace=True) after Linear and
BatchNorm, whose backward does not need their output) and residual additions (correct)."""

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc1, self.bn, self.fc2 = nn.Linear(width, width), nn.BatchNorm1d(width), nn.Linear(width, width)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        h = self.act(self.bn(self.fc1(x)))
        h = self.fc2(h)
        return self.act(h + x)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), Block(16), Block(16), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(5):
    x, y = torch.randn(16, 8), torch.randn(16, 1)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(float(loss))
