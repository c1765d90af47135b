"""The distributed check inside a plain ``record()`` (no ``gradprobe diagnose``): a real
one-process gloo group; nothing attached afterwards, gradients unchanged, no collective."""

from __future__ import annotations

import gc
import importlib
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


def _threads() -> int:
    return sum(1 for _ in Path("/proc/self/task").iterdir())


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_a_ddp_models_process_group_lives_until_the_recording_stops(tmp_path: Path) -> None:
    """NOTE [process groups outlive the models]: the model's death inside the recording must
    not destroy the group (that destructor holds the GIL and joins gloo's threads, which
    may need it); the recording's end does, through the group's Python binding."""
    # Imported before the group exists: a first import of dynamo (by record(), or by any
    # optimizer) loads torch.distributed.nn.functional, whose defaults keep the current
    # world group alive for good.
    importlib.import_module("torch._dynamo")
    dist.init_process_group(
        "gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1
    )
    with_group = _threads()  # the group's gloo worker threads included
    with gradprobe.record():
        model = DistributedDataParallel(nn.Linear(3, 1))
        model(torch.randn(4, 3)).sum().backward()
        dist.destroy_process_group()
        del model
        gc.collect()
        assert _threads() == with_group  # the group is alive: its threads still run
    assert _threads() < with_group  # and gone once the recording stopped
