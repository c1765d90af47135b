"""DDP: a NaN born on one rank reaches every rank through the gradient all-reduce.

Rank 1's shard holds a zero where the loss takes a log; after the first step every rank's
weights are NaN, and each rank's own trace starts somewhere else.
"""

import os
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main(rank: int, world: int) -> None:
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=15))
    torch.manual_seed(0)
    model = DDP(nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(rank)
    for _ in range(2):
        x = torch.randn(16, 4)
        scale = torch.ones(16, 1)
        if rank == 1:
            scale[3] = 0.0  # one empty sample in this rank's shard
        loss = (model(x) - torch.log(scale)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    if "RANK" in os.environ:  # started by torchrun
        main(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
    else:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29500")
        mp.spawn(main, args=(2,), nprocs=2)
