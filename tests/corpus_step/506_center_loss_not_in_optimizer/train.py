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

from losses import CenterLoss
from model import Net
from trainer import Trainer

torch.manual_seed(0)

x = torch.randn(400, 20)
y = (x[:, :4] + 0.1 * torch.randn(400, 4)).argmax(1)

model = Net()
criterion = CenterLoss(num_classes=4, feat_dim=2)
trainer = Trainer(model, criterion)
centers_before = criterion.centers.detach().clone()

for step in range(30):
    idx = torch.randint(0, 400, (64,))
    xent, cent = trainer.step(x[idx], y[idx])

moved = (criterion.centers.detach() - centers_before).abs().max().item()
print(f"final xent {xent:.4f}  center loss {cent:.4f}  centres moved {moved:.6f}")
