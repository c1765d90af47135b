"""Case 506 - learnable centres of the center loss are never given to an optimizer

Source: https://github.com/KaiyangZhou/pytorch-center-loss/issues/22
        "by excluding these parameter from the optimizer, it will not change"
Category: 2 - every gradient backward produces is consumed

Reported symptom:
    The centre-loss term hardly decreases: the class centres stay at their random
    initial positions while the features are pulled towards them.

Root cause:
    CenterLoss owns the class centres as an nn.Parameter. Backward computes a
    gradient for them every step, but the Trainer builds its single optimizer
    from model.parameters() only, so the centres' gradients are never applied
    (and never zeroed either: they just pile up).

Ground truth a good tool should report:
    criterion.centers receives a gradient at every backward but belongs to no
    optimizer; the optimizer is built in trainer.py from the model parameters only
    (the `self.optimizer = torch.optim.SGD(...)` line in Trainer.__init__).
"""
import torch
import torch.nn as nn


class CenterLoss(nn.Module):
    """Pulls each feature towards a learnable centre of its class."""

    def __init__(self, num_classes, feat_dim):
        super().__init__()
        self.centers = nn.Parameter(torch.randn(num_classes, feat_dim))

    def forward(self, features, labels):
        return ((features - self.centers[labels]) ** 2).sum(1).mean() / 2
