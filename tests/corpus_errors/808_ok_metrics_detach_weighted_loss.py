"""Case 808 - metrics through detach().numpy(), weighted loss reduced, multi-root backward

Source: pytorch/pytorch test/test_autograd.py, test_numpy_requires_grad (detach before numpy) and test_multi_backward (several roots that all require grad)
Category: correct

Reported symptom:
    none: the script runs to completion without error or warning.

Root cause:
    No bug. The per-sample loss (reduction="none") is weighted and then averaged to
    a scalar; the feature regulariser is computed from the live features so both
    roots given to torch.autograd.backward require grad; predictions are converted
    with .detach().numpy() for the accuracy metric.

Ground truth a good tool should report:
    Nothing.

EXPECT: no findings
"""
import numpy as np
import torch
from torch import nn

torch.manual_seed(0)

encoder = nn.Sequential(nn.Linear(8, 32), nn.ReLU())
head = nn.Linear(32, 3)
criterion = nn.CrossEntropyLoss(reduction="none")
opt = torch.optim.Adam([*encoder.parameters(), *head.parameters()], lr=1e-3)
class_w = torch.tensor([1.0, 3.0, 0.5])

x, y = torch.randn(24, 8), torch.randint(0, 3, (24,))
for step in range(3):
    feat = encoder(x)
    logits = head(feat)
    ce = (criterion(logits, y) * class_w[y]).mean()
    reg = 1e-3 * feat.pow(2).sum(dim=1).mean()
    opt.zero_grad()
    torch.autograd.backward([ce, reg])
    opt.step()
    preds = logits.softmax(dim=1).detach().numpy()
    acc = np.mean(preds.argmax(axis=1) == y.numpy())
    print(f"step {step} ce {ce.item():.3f} acc {acc:.2f}")
