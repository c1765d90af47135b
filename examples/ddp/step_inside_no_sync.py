"""DDP: gradient accumulation whose whole window runs inside no_sync().

Each window accumulates two micro-batches and steps. The loop puts both micro-batches
inside model.no_sync(), so no backward ever all-reduces: every rank steps with its own
gradients and the replicas drift apart, without any error.
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
    model = DDP(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(rank)
    for _ in range(2):
        with model.no_sync():  # accumulate without all-reducing
            for _ in range(2):
                x, y = torch.randn(16, 4), torch.randn(16, 1)
                nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        opt.zero_grad()
    dist.destroy_process_group()


if __name__ == "__main__":
    if "RANK" in os.environ:  # started by torchrun
        main(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
    else:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29500")
        mp.spawn(main, args=(2,), nprocs=2)
