"""Case 833 - fine-tuning with distinct parameter groups and a scheduler stepped after the optimizer

Source: pytorch/pytorch test/optim/test_optim.py, TestOptimRenewed.test_errors (disjoint param groups are accepted) and test/optim/test_lrscheduler.py (optimizer.step() before scheduler.step())
Category: correct

Reported symptom:
    none - the script trains for a few epochs and exits normally.

Root cause:
    none - backbone and head parameters are split into disjoint groups, the
    frozen embedding is excluded, and the LR scheduler steps after the
    optimizer at the end of each epoch.

Ground truth a good tool should report:
    Nothing.
EXPECT: no findings
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class FineTuneNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(20, 64)
        self.backbone = nn.Sequential(nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.head = nn.Linear(64, 5)

    def forward(self, x):
        return self.head(self.backbone(self.embed(x)))


model = FineTuneNet()
model.embed.requires_grad_(False)
opt = torch.optim.SGD(
    [
        {"params": model.backbone.parameters(), "lr": 1e-3},
        {"params": model.head.parameters(), "lr": 1e-2},
    ],
    momentum=0.9,
)
scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)

x, y = torch.randn(40, 20), torch.randint(0, 5, (40,))
for epoch in range(3):
    for xb, yb in zip(x.split(10), y.split(10)):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
    scheduler.step()
    print("epoch", epoch, "lrs", [g["lr"] for g in opt.param_groups], "loss", round(loss.item(), 4))
