"""DDP: a branch taken on one rank only, so a sub-module's parameters go unused there.

Rank 1 skips `self.refine` (its batch is "easy"); with find_unused_parameters=False DDP
stops at the next forward ("Expected to have finished reduction in the prior iteration").
`--find-unused` turns the flag on: no error, but the ranks train different networks.
"""

import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.refine = nn.Linear(8, 8)
        self.head = nn.Linear(8, 1)

    def forward(self, x: torch.Tensor, hard: bool) -> torch.Tensor:
        h = torch.relu(self.body(x))
        if hard:
            h = torch.relu(self.refine(h))
        return self.head(h)


def main(rank: int, world: int, find_unused: bool) -> None:
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=15))
    torch.manual_seed(0)
    model = DDP(Net(), find_unused_parameters=find_unused)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        x, y = torch.randn(16, 4), torch.randn(16, 1)
        loss = nn.functional.mse_loss(model(x, hard=rank == 0), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    find_unused = "--find-unused" in sys.argv
    if "RANK" in os.environ:  # started by torchrun
        main(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), find_unused)
    else:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29500")
        mp.spawn(main, args=(2, find_unused), nprocs=2)
