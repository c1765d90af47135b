"""Case 719 - a model with lazy layers is wrapped in DDP before its first forward

Source: pytorch/pytorch test/distributed/test_c10d_common.py / test/nn/test_lazy_modules.py (DDP rejects uninitialized parameters: "Modules with uninitialized parameters can't be used with `DistributedDataParallel`")
Category: DistributedDataParallel / lazy modules

Reported symptom:
    RuntimeError: Modules with uninitialized parameters can't be used with `DistributedDataParallel`. Run a dummy forward pass to correctly initialize the modules

Root cause:
    The head uses nn.LazyLinear so that the input width is inferred. Its
    parameters are UninitializedParameter until the first forward, and DDP
    must know every parameter's shape at construction to build its buckets,
    so wrapping the still-lazy model fails.

Ground truth a good tool should report:
    The nn.LazyLinear layer (CAUSE) is still uninitialised when DDP(...) is
    constructed (ERROR); run a dummy forward before wrapping or use nn.Linear.
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

try:
    model = nn.Sequential(
        nn.Conv1d(4, 8, 3),
        nn.ReLU(),
        nn.Flatten(),
        nn.LazyLinear(3),  # <- CAUSE
    )
    model = DDP(model)  # <- ERROR
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(6, 4, 20)
    y = torch.randint(0, 3, (6,))
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    print("loss", loss.item())
finally:
    dist.destroy_process_group()
