"""Case 717 - two backward passes through one DDP forward (retain_graph=True)

Source: pytorch/pytorch test/distributed/test_c10d_gloo.py / test_c10d_common.py, DDP reducer tests ("Expected to mark a variable ready only once")
Category: DistributedDataParallel

Reported symptom:
    RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the following reasons: 1) Use of a module parameter outside the `forward` function. Please make sure model parameters are not shared across multiple concurrent forward-backward passes. or try to use _set_static_graph() as a workaround if this module graph does not change during training loop.2) Reused parameters in multiple reentrant backward passes. For example, if you use multiple `checkpoint` functions to wrap the same part of your model, it would result in the same set of parameters been used by different reentrant backward passes multiple times, and hence marking a variable ready multiple times. DDP does not support such use cases in default. You can try to use _set_static_graph() as a workaround if your module graph does not change over iterations.

Root cause:
    The multi-task loop backpropagates each task loss separately with
    `retain_graph=True` to reuse one DDP forward. DDP's reducer expects exactly
    one backward per forward; the second backward tries to mark the shared
    parameters ready again within the same iteration.

Ground truth a good tool should report:
    The per-task `loss.backward(retain_graph=True)` (CAUSE) after a single DDP
    forward; sum the losses and call backward once. The second backward
    raises (ERROR, same line on the next loop iteration).
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


class TwoTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.cls = nn.Linear(32, 4)
        self.reg = nn.Linear(32, 1)

    def forward(self, x):
        h = self.shared(x)
        return self.cls(h), self.reg(h)


model = DDP(TwoTaskNet())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(16, 10)
y_cls, y_reg = torch.randint(0, 4, (16,)), torch.randn(16, 1)
try:
    opt.zero_grad()
    logits, value = model(x)
    task_losses = [nn.functional.cross_entropy(logits, y_cls), nn.functional.mse_loss(value, y_reg)]
    for loss in task_losses:
        loss.backward(retain_graph=True)  # <- CAUSE,ERROR
    opt.step()
    print("losses", [l.item() for l in task_losses])
finally:
    dist.destroy_process_group()
