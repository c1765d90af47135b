"""watch() on every rank of a DDP run, merged on rank 0 with session.gather().

Two gloo ranks train the same model on their own data; rank 1's inputs are 50 times
larger. Each rank watches its model; after training, ``session.gather()`` (a collective:
every rank calls it) hands rank 0 the merged report, which it prints.

``python examples/ddp/watch_ranks.py [MODE [OUT]]``: MODE ``watched`` (the default),
``plain`` (the same run without watching) or ``uneven`` (no DDP; rank 1 runs one step
fewer and one layer is never used). With OUT, each rank also saves its parameters and
gradients there, and rank 0 the merged report as JSON and text (the tests compare them).
"""

import os
import sys
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel

import gradprobe


class Head(nn.Module):
    def __init__(self, body: nn.Module) -> None:
        super().__init__()
        self.body = body
        self.unused = nn.Linear(2, 2)  # never called

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def train(rank: int, mode: str, out: Path | None) -> gradprobe.WatchSession | None:
    """Train on this rank; the model lives only here, so it is gone before the process
    group is destroyed."""
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))
    if mode == "uneven":
        net = Head(net)
    model = net if mode == "uneven" else DistributedDataParallel(net)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    torch.manual_seed(100 + rank)
    steps = 3 - rank if mode == "uneven" else 3
    session = gradprobe.watch(model) if mode != "plain" else None
    for _ in range(steps):
        x = torch.randn(16, 6) * (50.0 if rank == 1 else 1.0)
        loss = (model(x) - 1.0).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    if session is not None:
        session.close()
    if out is not None:
        state = {name: (p.detach().clone(), p.grad) for name, p in net.named_parameters()}
        torch.save(state, out / f"{mode}-{rank}.pt")
    return session


def main(rank: int, mode: str, out: Path | None) -> None:
    dist.init_process_group("gloo", rank=rank, world_size=2, timeout=timedelta(seconds=30))
    session = train(rank, mode, out)
    if session is not None:
        ranked = session.gather()  # every rank calls it; rank 0 gets the merged report
        if ranked is not None:
            print(ranked, flush=True)
        if out is not None and ranked is not None:
            (out / f"{mode}.json").write_text(ranked.to_json())
            (out / f"{mode}.txt").write_text(str(ranked))
        elif out is not None:
            (out / f"{mode}-{rank}.gathered").write_text(repr(ranked))
    # no rank leaves before the report is out: torch 2.13 can abort a rank at interpreter
    # exit (gloo threads still running), and mp.spawn then stops the others
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    chosen = sys.argv[1] if len(sys.argv) > 1 else "watched"
    folder = Path(sys.argv[2]) if len(sys.argv) > 2 else None
    mp.spawn(main, args=(chosen, folder), nprocs=2)
