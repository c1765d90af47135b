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

from losses import UncertaintyWeightedLoss
from nets import TwoHeadNet
from wrapper import Model

torch.manual_seed(0)

x = torch.randn(640, 10)
y_reg = x[:, :1] * 2.0 + 0.1 * torch.randn(640, 1)
y_cls = (x[:, 1] > 0).long()

network = TwoHeadNet(10)
criterion = UncertaintyWeightedLoss(tasks=2)
optimizer = torch.optim.Adam(list(network.parameters()) + list(criterion.parameters()), lr=1e-2)
model = Model(network, optimizer, criterion)

for epoch in range(3):
    loss = model.fit_epoch(x, (y_reg, y_cls), batch_size=64)

print(f"final loss {loss:.4f}  log_vars {criterion.log_vars.tolist()}")
