"""Case 702 - discriminative learning rates with the head listed in both groups

Source: pytorch/pytorch test/optim/test_optim.py, TestOptimRenewed.test_errors (ErrorOptimizerInput 'duplicate parameters should not occur across param groups either')
Category: optimizer construction

Reported symptom:
    ValueError: some parameters appear in more than one parameter group

Root cause:
    For fine-tuning the user wants a small learning rate for the backbone and a
    larger one for the new head, but the first group is built from
    `model.parameters()`, which already contains the head's parameters; the
    second group lists them again. A parameter may belong to one group only.

Ground truth a good tool should report:
    The first param group uses model.parameters() (CAUSE) instead of
    model.backbone.parameters(), duplicating the head; raised by the optimizer
    constructor (ERROR).
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class FineTuneNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.head = nn.Linear(64, 5)

    def forward(self, x):
        return self.head(self.backbone(x))


model = FineTuneNet()
backbone_group = {"params": model.parameters(), "lr": 1e-4}  # <- CAUSE
head_group = {"params": model.head.parameters(), "lr": 1e-2}
opt = torch.optim.SGD([backbone_group, head_group], momentum=0.9)  # <- ERROR

x, y = torch.randn(16, 20), torch.randint(0, 5, (16,))
for step in range(3):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    print("step", step, loss.item())
