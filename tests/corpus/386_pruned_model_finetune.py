"""Magnitude pruning with torch.nn.utils.prune, then fine-tuning the pruned model, then
making the pruning permanent (correct)."""

import torch
from torch import nn
from torch.nn.utils import prune

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 2))
prune.l1_unstructured(model[0], name="weight", amount=0.5)
prune.l1_unstructured(model[2], name="weight", amount=0.3)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for step in range(5):
    x, y = torch.randn(16, 12), torch.randint(0, 2, (16,))
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
prune.remove(model[0], "weight")
prune.remove(model[2], "weight")
print(float(loss), float((model[0].weight == 0).float().mean()))
