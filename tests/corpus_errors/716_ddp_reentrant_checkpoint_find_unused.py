"""Case 716 - reentrant activation checkpointing inside a DDP model with find_unused_parameters

Source: pytorch/pytorch test/distributed/test_c10d_common.py, DDP checkpointing tests (test_ddp_checkpointing_* with use_reentrant=True: "Expected to mark a variable ready only once")
Category: DistributedDataParallel + activation checkpointing

Reported symptom:
    RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the following reasons: 1) Use of a module parameter outside the `forward` function. Please make sure model parameters are not shared across multiple concurrent forward-backward passes. or try to use _set_static_graph() as a workaround if this module graph does not change during training loop.2) Reused parameters in multiple reentrant backward passes. For example, if you use multiple `checkpoint` functions to wrap the same part of your model, it would result in the same set of parameters been used by different reentrant backward passes multiple times, and hence marking a variable ready multiple times. DDP does not support such use cases in default. You can try to use _set_static_graph() as a workaround if your module graph does not change over iterations.

Root cause:
    The encoder blocks are checkpointed with use_reentrant=True and the model
    is wrapped in DDP(find_unused_parameters=True). With the reentrant variant
    the checkpointed parameters are not visible in the forward graph, so DDP's
    unused-parameter search marks them ready right after forward; the nested
    backward of the checkpoint then produces their gradients and marks them
    ready a second time.

Ground truth a good tool should report:
    `checkpoint(block, h, use_reentrant=True)` (CAUSE) is incompatible with
    DDP(find_unused_parameters=True); use use_reentrant=False. Raised in
    loss.backward() (ERROR).
"""
import os
import socket

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)

sock = socket.socket()
sock.bind(("127.0.0.1", 0))
os.environ["MASTER_ADDR"] = "127.0.0.1"
os.environ["MASTER_PORT"] = str(sock.getsockname()[1])
sock.close()
dist.init_process_group("gloo", rank=0, world_size=1)


class Encoder(nn.Module):
    def __init__(self, dim=16, depth=2):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(dim, dim), nn.Tanh()) for _ in range(depth)])
        self.head = nn.Linear(dim, 2)

    def forward(self, h):
        for block in self.blocks:
            h = checkpoint(block, h, use_reentrant=True)  # <- CAUSE
        return self.head(h)


model = DDP(Encoder(), find_unused_parameters=True)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(8, 16, requires_grad=True)
y = torch.randint(0, 2, (8,))
try:
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()  # <- ERROR
    opt.step()
    print("loss", loss.item())
finally:
    dist.destroy_process_group()
