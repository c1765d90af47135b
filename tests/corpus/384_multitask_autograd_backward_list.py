"""Multi-task training: two heads on a shared trunk, both losses backpropagated in one
torch.autograd.backward call with per-task weights (correct)."""

import torch
from torch import nn

torch.manual_seed(0)
trunk = nn.Sequential(nn.Linear(8, 32), nn.ReLU())
cls_head, reg_head = nn.Linear(32, 3), nn.Linear(32, 1)
params = [*trunk.parameters(), *cls_head.parameters(), *reg_head.parameters()]
opt = torch.optim.SGD(params, lr=0.05)
for step in range(5):
    x = torch.randn(16, 8)
    h = trunk(x)
    l_cls = nn.functional.cross_entropy(cls_head(h), torch.randint(0, 3, (16,)))
    l_reg = nn.functional.smooth_l1_loss(reg_head(h), torch.randn(16, 1))
    opt.zero_grad()
    torch.autograd.backward([l_cls, l_reg], [torch.tensor(1.0), torch.tensor(0.5)])
    opt.step()
print(float(l_cls), float(l_reg))
