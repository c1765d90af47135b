"""The host-sync guard: syncing tensor methods raise inside gradprobe hook bodies only."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from gradprobe._nosync import (
    SYNCING_METHODS,
    HostSyncError,
    forbid_host_syncs,
    hook_body,
    in_hook_body,
)
from gradprobe._watch import watch

SYNCS = {
    "item": lambda t: t.sum().item(),
    "tolist": lambda t: t.tolist(),
    "bool": lambda t: bool(t.sum() > 0),
    "float": lambda t: float(t.sum()),
    "int": lambda t: int(t.sum()),
    "nonzero method": lambda t: t.nonzero(),
    "torch.nonzero": lambda t: torch.nonzero(t),
    "numpy": lambda t: t.detach().numpy(),
    "torch.equal": lambda t: torch.equal(t, t),
    "torch.is_nonzero": lambda t: torch.is_nonzero(t.sum()),
}


@pytest.mark.parametrize("name", sorted(SYNCS))
def test_each_syncing_call_raises_inside_a_hook_body(name: str) -> None:
    sync = SYNCS[name]

    @hook_body
    def body(t: torch.Tensor) -> object:
        return sync(t)

    t = torch.ones(3)
    with forbid_host_syncs():
        sync(t)  # outside a hook body: allowed
        with pytest.raises(HostSyncError, match="inside the gradprobe hook"):
            body(t)
        sync(t)  # the flag is reset after the raise
    body(t)  # outside the guard: allowed


def test_guard_restores_every_patched_name_also_after_an_error() -> None:
    before = {name: torch.Tensor.__dict__.get(name) for name in SYNCING_METHODS}
    functions = {name: getattr(torch, name) for name in ("nonzero", "equal", "allclose")}
    with pytest.raises(ZeroDivisionError), forbid_host_syncs():
        assert torch.Tensor.__dict__.get("item") is not None
        _ = 1 / 0
    assert {name: torch.Tensor.__dict__.get(name) for name in SYNCING_METHODS} == before
    assert {name: getattr(torch, name) for name in functions} == functions
    assert torch.ones(1).item() == 1.0


def test_guards_nest_and_flag_tracks_hook_bodies() -> None:
    seen = []

    @hook_body
    def body() -> None:
        seen.append(in_hook_body())

    with forbid_host_syncs():
        with forbid_host_syncs():
            body()
        body()  # the outer guard is still active
        assert not in_hook_body()
    body()  # no guard: not marked
    assert seen == [True, True, False]
    assert torch.Tensor.__dict__.get("item") is None


def test_a_deliberately_syncing_backward_hook_fails_the_step() -> None:
    model = nn.Linear(3, 2)

    @hook_body
    def syncing_hook(grad: torch.Tensor) -> None:
        if grad.abs().max() > 1:  # bool(tensor): a host sync
            pass

    handle = model.weight.register_hook(syncing_hook)
    try:
        with forbid_host_syncs(), pytest.raises(HostSyncError, match="syncing_hook"):
            model(torch.randn(4, 3)).sum().backward()
    finally:
        handle.remove()


def _training_loop(steps: int, nan_at: int) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1),
        nn.BatchNorm2d(4),
        nn.ReLU(inplace=True),
        nn.Flatten(),
        nn.Linear(4 * 6 * 6, 5),
        nn.ReLU(),
        nn.Linear(5, 2),
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    with watch(model, optimizer=opt, sample_every=1, history=2) as session:
        for step in range(steps):
            opt.zero_grad()
            x = torch.randn(4, 3, 6, 6)
            if step == nan_at:
                x[0, 0, 0, 0] = float("nan")
            model(x).pow(2).mean().backward()
            opt.step()
            with torch.no_grad():
                model(x)
    assert session.notes == ()
    assert session.steps == 2 * steps


def test_watch_hooks_never_sync_even_on_nan_and_sampled_steps() -> None:
    with forbid_host_syncs():
        _training_loop(steps=12, nan_at=9)  # 24 steps, history=2: folds run inside hooks


def test_watch_hooks_would_be_caught_if_they_synced(monkeypatch: pytest.MonkeyPatch) -> None:
    from gradprobe._watch import _stats

    def syncing_sums(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        total = t.sum()
        return torch.tensor(total.item()), total  # a sync where the real kernel has none

    monkeypatch.setattr(_stats, "activation_sums", syncing_sums)
    with forbid_host_syncs(), pytest.raises(HostSyncError, match="WatchSession"):
        _training_loop(steps=1, nan_at=-1)
