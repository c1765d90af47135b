"""A head trained first, then the backbone unfrozen and given to the optimizer as a new
parameter group with a smaller learning rate (correct)."""

import torch
from torch import nn

torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
head = nn.Linear(32, 2)
backbone.requires_grad_(False)
opt = torch.optim.Adam(head.parameters(), lr=1e-3)
for epoch in range(3):
    if epoch == 1:
        backbone.requires_grad_(True)
        opt.add_param_group({"params": backbone.parameters(), "lr": 1e-4})
    for _ in range(2):
        x, y = torch.randn(8, 10), torch.randint(0, 2, (8,))
        loss = nn.functional.cross_entropy(head(backbone(x)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
print(float(loss))
