"""Multi-task model: one encoder, a classification head and a regression head."""
from torch import nn


class MultiTaskNet(nn.Module):
    def __init__(self, in_dim=16, hidden=32, classes=3):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.Tanh())
        self.cls_head = nn.Linear(hidden, classes)
        self.reg_head = nn.Linear(hidden, 1)
