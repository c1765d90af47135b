"""Modules with uninitialized parameters can't be used with `DistributedDataParallel`."""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
try:
    model = torch.nn.Sequential(
        torch.nn.Linear(4, 8),
        torch.nn.ReLU(),
        torch.nn.LazyLinear(2),  # <- CAUSE
    )
    model = DistributedDataParallel(model)  # <- ERROR
finally:
    dist.destroy_process_group()
