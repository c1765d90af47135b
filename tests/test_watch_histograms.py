"""watch(histograms=True): weight and gradient histograms at the sampled steps, written to
TensorBoard with add_histogram_raw and read back as TensorBoard reads them."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from gradprobe._nosync import forbid_host_syncs
from gradprobe._watch import WatchSession, watch
from gradprobe._watch._export import histograms
from gradprobe._watch._histograms import BINS
from gradprobe.errors import GradprobeTypeError

Snapshot = dict[str, torch.Tensor]


def _train(
    steps: int, sample_every: int = 2, nan_at: int | None = None
) -> tuple[WatchSession, list[Snapshot], list[Snapshot]]:
    """Train a small MLP under watch(histograms=True); the weights each forward used and
    the gradients each backward produced, per step."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    weights: list[Snapshot] = []
    grads: list[Snapshot] = []
    with watch(model, optimizer=opt, sample_every=sample_every, histograms=True) as session:
        for step in range(steps):
            opt.zero_grad()
            weights.append({n: p.detach().clone() for n, p in model.named_parameters()})
            x = torch.randn(8, 6)
            loss = model(x).pow(2).mean()
            if step == nan_at:
                loss = loss * math.nan
            loss.backward()
            grads.append({n: p.grad.clone() for n, p in model.named_parameters()})  # type: ignore[union-attr]
            opt.step()
    return session, weights, grads


def test_histograms_of_weights_and_gradients_at_sampled_steps_only() -> None:
    session, weights, grads = _train(5, sample_every=2)
    kept = histograms(session)
    names = ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert [(h.step, h.kind, h.name) for h in kept] == [
        (step, kind, name) for step in (0, 2, 4) for kind in ("weight", "grad") for name in names
    ]
    for h in kept:
        values = (weights if h.kind == "weight" else grads)[h.step][h.name].double()
        assert h.num == values.numel()
        assert (h.min, h.max) == (values.min().item(), values.max().item())
        assert h.sum == pytest.approx(values.sum().item(), rel=1e-5, abs=1e-7)
        assert h.sum_squares == pytest.approx(values.pow(2).sum().item(), rel=1e-5)
        assert sum(h.bucket_counts) == h.num
        if h.max > h.min:
            assert len(h.bucket_counts) == len(h.bucket_limits) == BINS
            assert h.bucket_limits[-1] == h.max
            counts, _ = np.histogram(values.numpy(), bins=BINS, range=(h.min, h.max))
            assert h.bucket_counts == counts.tolist(), (h.step, h.kind, h.name)


def test_a_non_finite_gradient_keeps_no_buckets() -> None:
    session, _, _ = _train(3, sample_every=1, nan_at=2)
    by_key = {(h.step, h.kind, h.name): h for h in histograms(session)}
    nan_grad = by_key[(2, "grad", "2.weight")]
    assert math.isnan(nan_grad.sum) and not nan_grad.finite and nan_grad.bucket_limits == []
    assert by_key[(2, "weight", "2.weight")].finite  # the weights were still fine


def test_histogram_hooks_never_wait_for_the_device() -> None:
    with forbid_host_syncs():
        session, _, _ = _train(6, sample_every=1)
    assert len(histograms(session)) == 6 * 8


def test_sessions_without_the_option_keep_none_and_scalar_writers_still_work() -> None:
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    with watch(model, sample_every=1) as session:
        model(torch.randn(4, 3)).sum().backward()
    assert histograms(session) == []
    assert session.options()["histograms"] is False

    class ScalarsOnly:
        def __init__(self) -> None:
            self.tags: list[str] = []

        def add_scalar(self, tag: str, value: float, step: int) -> None:
            self.tags.append(tag)

    assert session.to_tensorboard(ScalarsOnly()) > 0
    with_histograms, _, _ = _train(1)
    with pytest.raises(GradprobeTypeError, match="add_histogram_raw"):
        with_histograms.to_tensorboard(ScalarsOnly())


def test_histograms_option_must_be_a_bool() -> None:
    with pytest.raises(GradprobeTypeError, match=r"histograms=.*'yes'"):
        watch(nn.Linear(2, 2), histograms="yes")  # type: ignore[arg-type]


def test_summary_writer_histograms_read_back_with_event_accumulator(tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")  # in the test extra; the skip is for bare installs
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from torch.utils.tensorboard import SummaryWriter

    session, weights, grads = _train(5, sample_every=2, nan_at=4)
    writer = SummaryWriter(log_dir=str(tmp_path))
    try:
        written = session.to_tensorboard(writer)
    finally:
        writer.close()
    events = EventAccumulator(str(tmp_path), size_guidance={"histograms": 0})
    events.Reload()
    tags = events.Tags()["histograms"]
    assert sorted(tags) == sorted(
        f"gradprobe/{kind}/{name}"
        for kind in ("weight", "grad")
        for name in ("0.weight", "0.bias", "2.weight", "2.bias")
    )
    scalars = sum(len(events.Scalars(tag)) for tag in events.Tags()["scalars"])
    drawn = sum(len(events.Histograms(tag)) for tag in tags)
    assert scalars + drawn == written
    # Step 4's gradients are NaN: its weight histograms are written, its gradient ones not.
    assert [e.step for e in events.Histograms("gradprobe/weight/0.weight")] == [0, 2, 4]
    assert [e.step for e in events.Histograms("gradprobe/grad/0.weight")] == [0, 2]
    step2 = events.Histograms("gradprobe/grad/0.weight")[1].histogram_value
    expected = grads[2]["0.weight"].double()
    assert step2.num == expected.numel()
    assert (step2.min, step2.max) == (expected.min().item(), expected.max().item())
    counts, edges = np.histogram(expected.numpy(), bins=BINS, range=(step2.min, step2.max))
    assert list(step2.bucket) == counts.tolist()
    assert list(step2.bucket_limit) == pytest.approx(edges[1:].tolist())
    weight0 = events.Histograms("gradprobe/weight/2.bias")[0].histogram_value
    assert weight0.sum == pytest.approx(weights[0]["2.bias"].sum().item(), rel=1e-6)
