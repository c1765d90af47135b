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
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, center_loss, lr=0.05, weight_cent=0.5):
        self.model = model
        self.center_loss = center_loss
        self.weight_cent = weight_cent
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=lr, momentum=0.9)  # <- CAUSE

    def step(self, x, y):
        feats, logits = self.model(x)
        loss_xent = F.cross_entropy(logits, y)
        loss_cent = self.center_loss(feats, y)
        loss = loss_xent + self.weight_cent * loss_cent
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss_xent.item(), loss_cent.item()
