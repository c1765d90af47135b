"""Case 581 - the training framework clears the network, not the optimizer

Source: https://github.com/freud14/poutyne/issues/12
        "should It be self.optimizer.zero_grad() instead of self.model.zero_grad()"
Category: 3 - a step consumes exactly the gradients meant for it

Reported symptom:
    A multi-task model trained through a small Keras-like wrapper learns, but
    the learned task weights (uncertainty weighting) run away: the log
    variances grow a little more at every batch until one task is ignored.

Root cause:
    The wrapper clears gradients with self.network.zero_grad(). The optimizer
    also holds the parameters of the loss module (the per-task log
    variances), which are not part of the network, so their gradients are
    never cleared and every step applies the sum of all earlier batches'
    gradients to them.

Ground truth a good tool should report:
    The step consumes gradients of the loss module's parameters that earlier
    steps already used; the `self.network.zero_grad()` in wrapper.py should be
    `self.optimizer.zero_grad()`.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class UncertaintyWeightedLoss(nn.Module):
    def __init__(self, tasks):
        super().__init__()
        self.log_vars = nn.Parameter(torch.zeros(tasks))

    def forward(self, outputs, targets):
        (reg, cls), (y_reg, y_cls) = outputs, targets
        losses = torch.stack([F.mse_loss(reg, y_reg), F.cross_entropy(cls, y_cls)])
        return (torch.exp(-self.log_vars) * losses + self.log_vars).sum()
