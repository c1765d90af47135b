"""DDP: the ranks build different models ("DDP expects same model across all ranks").

A rank-dependent option adds a layer on rank 0 only; DDP's constructor compares the
parameter counts across ranks and refuses, without saying which parameters differ.
"""

import os
from datetime import timedelta

import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def build(deep: bool) -> nn.Module:
    layers: list[nn.Module] = [nn.Linear(4, 8), nn.ReLU()]
    if deep:
        layers += [nn.Linear(8, 8), nn.ReLU()]
    layers.append(nn.Linear(8, 1))
    return nn.Sequential(*layers)


def main(rank: int, world: int) -> None:
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=15))
    try:
        model = DDP(build(deep=rank == 0))
        print(model)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    if "RANK" in os.environ:  # started by torchrun
        main(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
    else:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29500")
        mp.spawn(main, args=(2,), nprocs=2)
