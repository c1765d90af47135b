import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, d_in=16, hidden=64, n_classes=4):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, n_classes)

    def forward(self, x):
        return self.fc2(self.fc1(x).relu())
