"""The distributed check inside a plain ``record()`` (no ``gradprobe diagnose``): a real
one-process gloo group; nothing attached afterwards, gradients unchanged, no collective."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

import gradprobe


@pytest.fixture
def group(tmp_path: Path):  # type: ignore[no-untyped-def]
    dist.init_process_group(
        "gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1
    )
    yield
    if dist.is_initialized():
        dist.destroy_process_group()


def _grads(record: bool) -> list[torch.Tensor]:
    torch.manual_seed(0)
    model = DistributedDataParallel(nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)))
    x = torch.randn(5, 3)
    if record:
        with gradprobe.record() as rec:
            model(x).pow(2).mean().backward()
        assert rec.findings == []
    else:
        model(x).pow(2).mean().backward()
    return [p.grad.clone() for p in model.parameters() if p.grad is not None]


def test_ddp_under_record_keeps_gradients_and_leaves_nothing(group) -> None:  # type: ignore[no-untyped-def]
    originals = (
        DistributedDataParallel.__dict__["__init__"],
        DistributedDataParallel.__dict__["forward"],
        dist.destroy_process_group,
        "requires_grad_" in torch.Tensor.__dict__,
    )
    plain, recorded = _grads(record=False), _grads(record=True)
    assert len(plain) == 4
    for a, b in zip(plain, recorded, strict=True):
        assert torch.equal(a, b)
    with pytest.raises(ZeroDivisionError), gradprobe.record():
        DistributedDataParallel(nn.Linear(2, 2))(torch.ones(1, 2)).sum().backward()
        raise ZeroDivisionError
    assert originals == (
        DistributedDataParallel.__dict__["__init__"],
        DistributedDataParallel.__dict__["forward"],
        dist.destroy_process_group,
        "requires_grad_" in torch.Tensor.__dict__,
    )
