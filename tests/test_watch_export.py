"""watch exports: JSON text and TensorBoard scalars (any writer with add_scalar)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from torch import nn

from gradprobe._watch import watch
from gradprobe.errors import GradprobeTypeError


class FakeWriter:
    def __init__(self) -> None:
        self.scalars: list[tuple[str, float, int]] = []

    def add_scalar(self, tag: str, value: float, global_step: int) -> None:
        self.scalars.append((tag, value, global_step))


def _run(
    steps: int, nan_at: int | None = None, sample_every: int = 2
) -> tuple[nn.Module, object, list[dict]]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    grads = []
    session = watch(model, optimizer=opt, sample_every=sample_every)
    for step in range(steps):
        opt.zero_grad()
        x = torch.randn(4, 3)
        if step == nan_at:
            x[0, 0] = math.inf
        model(x).sum().backward()
        grads.append({n: p.grad.clone() for n, p in model.named_parameters()})
        opt.step()
    return model, session, grads


def test_json_round_trips_with_non_finite_numbers_as_strings() -> None:
    _, session, _ = _run(3, nan_at=1)
    session.close()  # type: ignore[attr-defined]
    text = session.to_json()  # type: ignore[attr-defined]

    def refuse(constant: str) -> None:
        raise AssertionError(f"non-standard JSON constant {constant}")

    data = json.loads(text, parse_constant=refuse)
    assert list(data) == [
        "format",
        "options",
        "open",
        "steps",
        "notes",
        "findings",
        "gradient_flow",
        "history",
    ]
    assert data["steps"] == 3 and data["open"] is False
    assert [f["code"] for f in data["findings"]][:2] == ["GP201", "GP202"]
    assert data["findings"][0]["details"]["step"] == 1
    step1 = data["history"][1]
    stats = step1["activations"][0]["stats"]  # the input held +Inf at an unsampled step
    assert (stats["total"], stats["max"]) == ("inf", None)
    assert step1["gradients"] and step1["sampled"] is False
    assert data["options"]["modules"] == ["0", "1", "2"]


def test_tensorboard_scalars_match_the_history_and_are_written_once() -> None:
    _, session, grads = _run(3, sample_every=1)
    writer = FakeWriter()
    written = session.to_tensorboard(writer)  # type: ignore[attr-defined]
    assert written == len(writer.scalars) > 0
    by_tag = {(tag, step): value for tag, value, step in writer.scalars}
    # Steps 0 and 1 are finished; step 2 is still running and waits for a later call.
    assert {step for _, _, step in writer.scalars} == {0, 1}
    assert by_tag[("gradprobe/grad/2.weight/norm", 0)] == pytest.approx(
        grads[0]["2.weight"].norm().item(), rel=1e-5
    )
    assert by_tag[("gradprobe/grad/0.bias/max_abs", 1)] == grads[1]["0.bias"].abs().max().item()
    assert ("gradprobe/update_ratio/0.weight", 1) in by_tag
    assert ("gradprobe/activation/1/zero_fraction", 0) in by_tag
    assert session.to_tensorboard(writer) == 0  # type: ignore[attr-defined]
    session.close()  # type: ignore[attr-defined]
    assert session.to_tensorboard(writer, prefix="gradprobe") > 0  # type: ignore[attr-defined]
    assert {step for _, _, step in writer.scalars} == {0, 1, 2}
    other = FakeWriter()
    assert session.to_tensorboard(other, prefix="run1") == len(writer.scalars)  # type: ignore[attr-defined]
    assert all(tag.startswith("run1/") for tag, _, _ in other.scalars)


def test_tensorboard_gets_nothing_from_steps_between_samples() -> None:
    _, session, grads = _run(4, sample_every=2)
    session.close()  # type: ignore[attr-defined]
    writer = FakeWriter()
    session.to_tensorboard(writer)  # type: ignore[attr-defined]
    by_tag = {(tag, step): value for tag, value, step in writer.scalars}
    assert {step for _, _, step in writer.scalars} == {0, 2}  # only the NaN check ran at 1, 3
    assert by_tag[("gradprobe/grad/0.bias/max_abs", 2)] == grads[2]["0.bias"].abs().max().item()


def test_tensorboard_needs_add_scalar() -> None:
    _, session, _ = _run(1)
    session.close()  # type: ignore[attr-defined]
    with pytest.raises(GradprobeTypeError, match="add_scalar"):
        session.to_tensorboard(object())  # type: ignore[attr-defined]


def test_real_summary_writer(tmp_path: Path) -> None:
    # tensorboard is in the test extra; the skip is for users running the suite without it.
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from torch.utils.tensorboard import SummaryWriter

    _, session, grads = _run(3)
    session.close()  # type: ignore[attr-defined]
    writer = SummaryWriter(log_dir=str(tmp_path))
    try:
        written = session.to_tensorboard(writer)  # type: ignore[attr-defined]
    finally:
        writer.close()

    # Read the event file back as TensorBoard would: every scalar arrives, at its step.
    events = EventAccumulator(str(tmp_path))
    events.Reload()
    tags = events.Tags()["scalars"]
    assert sum(len(events.Scalars(tag)) for tag in tags) == written
    bias_max = events.Scalars("gradprobe/grad/0.bias/max_abs")
    assert [e.step for e in bias_max] == [0, 2]
    assert bias_max[1].value == pytest.approx(grads[2]["0.bias"].abs().max().item(), rel=1e-6)
    assert any(tag.startswith("gradprobe/activation/") for tag in tags)
