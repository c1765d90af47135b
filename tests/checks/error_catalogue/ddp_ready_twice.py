"""Expected to mark a variable ready only once (reentrant checkpoints over shared layers)."""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.checkpoint import checkpoint


class Twice(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(3, 3)

    def forward(self, x):
        h = checkpoint(self.a, x, use_reentrant=True)  # <- CAUSE
        return checkpoint(self.a, h, use_reentrant=True)  # <- CAUSE


dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
try:
    model = DistributedDataParallel(Twice(), find_unused_parameters=True)
    model(torch.randn(2, 3, requires_grad=True)).sum().backward()  # <- ERROR
finally:
    dist.destroy_process_group()
