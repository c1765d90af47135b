"""DDP: layers unfrozen after DistributedDataParallel was built are never synchronised.

The backbone starts frozen and is unfrozen for fine-tuning once the model is wrapped. DDP
chose the parameters it all-reduces when it was built, so the backbone's gradients stay
local: each rank trains its own backbone and the copies drift apart, without any error.
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
    backbone, head = nn.Linear(4, 8), nn.Linear(8, 1)
    backbone.requires_grad_(False)
    model = DDP(nn.Sequential(backbone, nn.ReLU(), head))
    backbone.requires_grad_(True)  # fine-tune everything from here on
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(rank)
    for _ in range(3):
        x, y = torch.randn(16, 4), torch.randn(16, 1)
        loss = nn.functional.mse_loss(model(x), y)
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
