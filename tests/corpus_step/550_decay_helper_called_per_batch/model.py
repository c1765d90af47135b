import torch.nn as nn


class Regressor(nn.Module):
    """A small box regressor head."""

    def __init__(self, d_in=10, hidden=32, out=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, out))

    def forward(self, x):
        return self.net(x)
