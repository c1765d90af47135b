"""Case 617 - in-place ReLU on a slice of a prototype Parameter (model module)

Source: pytorch/pytorch test/test_autograd.py, test_inplace_on_view_weak_grad_fn (assertRaises RuntimeError for a.narrow(...).relu_() on a leaf)
Category: in-place

Reported symptom:
    RuntimeError: a view of a leaf Variable that requires grad is being used in an in-place operation.

Root cause:
    PrototypeHead.forward takes the active prototypes with self.protos.narrow(...)
    (a view of a Parameter) and applies F.relu(..., inplace=True) to it to keep them
    non-negative. That is an in-place write into a view of a leaf that requires
    grad, which autograd refuses with grad mode on.

Ground truth a good tool should report:
    The `F.relu(active, inplace=True)` line in PrototypeHead.forward: use the
    out-of-place F.relu(active).
"""
import torch
from torch import nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, in_dim, dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, dim), nn.ReLU(), nn.Linear(dim, dim))

    def forward(self, x):
        return F.normalize(self.net(x), dim=1)


class PrototypeHead(nn.Module):
    def __init__(self, dim, n_protos, n_active):
        super().__init__()
        self.protos = nn.Parameter(torch.rand(n_protos, dim))
        self.n_active = n_active

    def forward(self, feats):
        active = self.protos.narrow(0, 0, self.n_active)
        active = F.relu(active, inplace=True)  # <- CAUSE,ERROR
        return feats @ F.normalize(active, dim=1).t()


class ProtoNet(nn.Module):
    def __init__(self, in_dim=12, dim=16, n_protos=10, n_active=6):
        super().__init__()
        self.encoder = Encoder(in_dim, dim)
        self.head = PrototypeHead(dim, n_protos, n_active)

    def forward(self, x):
        return self.head(self.encoder(x)) / 0.1
