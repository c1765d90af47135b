"""Expected to have finished reduction in the prior iteration before starting a new one."""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


class TwoHeads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(3, 3)
        self.b = torch.nn.Linear(3, 3)  # <- CAUSE

    def forward(self, x):
        return self.a(x)


dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
try:
    model = DistributedDataParallel(TwoHeads())
    for _ in range(2):
        model(torch.randn(2, 3)).sum().backward()  # <- ERROR
finally:
    dist.destroy_process_group()
