import torch.nn as nn

from quant import FakeQuantize


class QuantMLP(nn.Module):
    def __init__(self, d_in=12, hidden=32, n_classes=4):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.q1 = FakeQuantize()
        self.fc2 = nn.Linear(hidden, n_classes)
        self.q2 = FakeQuantize()

    def forward(self, x):
        return self.q2(self.fc2(self.q1(self.fc1(x).relu())))
