"""Case 593 - a calculator sets the default dtype to float64 and a later student crashes

Source: https://github.com/ACEsuit/mace/issues/877
Category: 5 - global switches are scoped

Root cause:
    (see potentials.py) fit_student() builds its Linear layers with the default
    dtype and casts its data to float32 on purpose.
"""
import torch
import torch.nn as nn


def fit_student(x, y, steps=30):
    xt, yt = x.float(), y.float()
    net = nn.Sequential(nn.Linear(xt.shape[1], 32), nn.Tanh(), nn.Linear(32, 1))
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
    for _ in range(steps):
        loss = ((net(xt).squeeze(-1) - yt) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return net, loss.item()
