"""Stochastic weight averaging: AveragedModel updated after each step in the last epochs,
then update_bn over the data (correct)."""

import torch
from torch import nn
from torch.optim.swa_utils import SWALR, AveragedModel, update_bn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
swa = AveragedModel(model)
swa_sched = SWALR(opt, swa_lr=0.02)
data = [(torch.randn(8, 6), torch.randn(8, 1)) for _ in range(3)]
for epoch in range(4):
    for x, y in data:
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    if epoch >= 2:
        swa.update_parameters(model)
        swa_sched.step()
update_bn(((x,) for x, _ in data), swa)
with torch.no_grad():
    print(float(swa(torch.randn(4, 6)).mean()))
