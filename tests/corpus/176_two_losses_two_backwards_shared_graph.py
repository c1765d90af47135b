"""Case 176 - two losses on one forward, each with its own backward().

Source: a frequent discuss.pytorch.org report (paraphrased): "Trying to backward through
the graph a second time (or directly access saved tensors after they have already been
freed)" with a multi-task model.
Root cause: the first backward frees the shared trunk's graph; the second needs it. Sum
the losses (one backward) or pass retain_graph=True to the first.
"""
import torch
from torch import nn

torch.manual_seed(0)
trunk = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
a, b = nn.Linear(16, 1), nn.Linear(16, 1)
opt = torch.optim.Adam([*trunk.parameters(), *a.parameters(), *b.parameters()], lr=1e-3)
h = trunk(torch.randn(8, 6))
loss_a = a(h).pow(2).mean()
loss_b = (b(h) - 1).pow(2).mean()
opt.zero_grad()
loss_a.backward()  # <- CAUSE
loss_b.backward()  # <- ERROR
opt.step()
