"""Case 834 - DDP with find_unused_parameters=True for a model that uses one domain head per step

Source: pytorch/pytorch test/distributed/test_c10d_gloo.py / test_c10d_common.py (DDP unused-parameter detection with find_unused_parameters=True)
Category: correct

Reported symptom:
    none - the script runs a few single-process gloo steps and exits normally.

Root cause:
    none - each step routes the batch through one of two domain heads, so the
    other head is skipped; the model is wrapped with
    find_unused_parameters=True, so the reducer marks the skipped parameters
    ready; each forward is followed by exactly one backward.

Ground truth a good tool should report:
    Nothing.
EXPECT: no findings
"""
import os
import socket

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

torch.manual_seed(0)

sock = socket.socket()
sock.bind(("127.0.0.1", 0))
os.environ["MASTER_ADDR"] = "127.0.0.1"
os.environ["MASTER_PORT"] = str(sock.getsockname()[1])
sock.close()
dist.init_process_group("gloo", rank=0, world_size=1)


class MultiDomainNet(nn.Module):
    def __init__(self, domains=2):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(8, 32), nn.ReLU())
        self.heads = nn.ModuleList([nn.Linear(32, 3) for _ in range(domains)])

    def forward(self, x, domain):
        return self.heads[domain](self.trunk(x))


model = DDP(MultiDomainNet(), find_unused_parameters=True)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(16, 8)
y = torch.randint(0, 3, (16,))
try:
    for step in range(4):
        domain = step % 2
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x, domain), y)
        loss.backward()
        opt.step()
        print("step", step, "domain", domain, round(loss.item(), 4))
finally:
    dist.destroy_process_group()
