"""gradprobe.integrations.lightning.GradprobeCallback with the real Lightning Trainer: a
tiny model, a few CPU steps, a planted NaN found, logged through the trainer's loggers."""

from __future__ import annotations

import csv
import logging
import math
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from _integrations import attached, line_of

# lightning is in the test extra; the skip is for users running the suite without it.
pl = pytest.importorskip("lightning.pytorch")

from gradprobe.errors import (
    GradprobeTypeError,
    GradprobeValueError,
    IntegrationNotFoundError,
)
from gradprobe.integrations.lightning import GradprobeCallback


class Regressor(pl.LightningModule):  # type: ignore[misc]
    """Two linear layers; ``nan_at`` plants sqrt(negative) at that optimizer step."""

    def __init__(self, nan_at: int | None = None, fail_at: int | None = None) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.act = nn.Tanh()
        self.fc2 = nn.Linear(8, 1)
        self.nan_at = nan_at
        self.fail_at = fail_at
        self.grad_norms: dict[int, float] = {}
        self.optimizer: torch.optim.Optimizer | None = None

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        x, y = batch
        if self.global_step == self.fail_at:
            raise ValueError("the data loader gave up")
        h = self.fc2(self.act(self.fc1(x))).squeeze(-1)
        if self.global_step == self.nan_at:
            h = torch.sqrt(h - 100.0)  # planted NaN
        loss = ((h - y) ** 2).mean()
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch: Any, batch_idx: int) -> None:
        x, y = batch
        self.log("val_loss", ((self.fc2(self.act(self.fc1(x))).squeeze(-1) - y) ** 2).mean())

    def on_after_backward(self) -> None:
        grad = self.fc1.weight.grad
        assert grad is not None
        self.grad_norms[self.global_step] = grad.norm().item()

    def configure_optimizers(self) -> torch.optim.Optimizer:
        self.optimizer = torch.optim.SGD(self.parameters(), lr=0.05)
        return self.optimizer


def _loader(n: int = 48) -> torch.utils.data.DataLoader[Any]:
    generator = torch.Generator().manual_seed(0)
    data = torch.utils.data.TensorDataset(
        torch.randn(n, 4, generator=generator), torch.randn(n, generator=generator)
    )
    return torch.utils.data.DataLoader(data, batch_size=8)


def _fit(
    tmp_path: Path,
    model: Regressor,
    callback: GradprobeCallback,
    steps: int = 6,
    validate: bool = False,
) -> Any:
    torch.manual_seed(0)
    trainer = pl.Trainer(
        max_steps=steps,
        accelerator="cpu",
        devices=1,
        callbacks=[callback],
        logger=[
            pl.loggers.CSVLogger(str(tmp_path / "csv"), name="", version=""),
            pl.loggers.TensorBoardLogger(str(tmp_path / "tb"), name="", version=""),
        ],
        log_every_n_steps=1,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
        num_sanity_val_steps=2 if validate else 0,
        limit_val_batches=2 if validate else 0,
        val_check_interval=3 if validate else None,
    )
    trainer.fit(model, _loader(), _loader(16) if validate else None)
    return trainer


def _csv_metrics(tmp_path: Path) -> dict[str, dict[int, float]]:
    """metric -> {step: value} from the CSV logger's file."""
    found: dict[str, dict[int, float]] = {}
    with (tmp_path / "csv" / "metrics.csv").open() as file:
        for row in csv.DictReader(file):
            for key, value in row.items():
                if key != "step" and value not in ("", None):
                    found.setdefault(key, {})[int(row["step"])] = float(value)
    return found


def _events(tmp_path: Path) -> Any:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(tmp_path / "tb"), size_guidance={"histograms": 0, "tensors": 0})
    events.Reload()
    return events


def test_a_planted_nan_is_found_with_its_line_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    callback = GradprobeCallback(sample_every=2)
    with caplog.at_level(logging.WARNING, logger="gradprobe"):
        _fit(tmp_path, Regressor(nan_at=3), callback)

    findings = callback.findings
    codes = [f.code for f in findings]
    assert codes[:2] == ["GP201", "GP202"]  # record(): the line that made the NaN
    cause = findings[0].cause
    assert cause is not None
    assert (cause.file, cause.line) == (__file__, line_of(Regressor.training_step, "planted"))
    assert "sqrt" in findings[0].message
    # watch(): the same NaN, by module and step (the gradient at step 3, the forward at 4,
    # once the step had written NaN into fc1)
    watched = {f.code: f for f in findings[2:]}
    assert watched["GP202"].details["step"] == 3 and watched["GP202"].module == "fc2"
    assert watched["GP201"].details["step"] == 4 and watched["GP201"].module == "fc1"
    assert callback.session is not None and not callback.session.open
    assert callback.session.steps == 6  # one watch step per optimizer step

    # Logged through both loggers: counts per code, statistics of the sampled steps.
    metrics = _csv_metrics(tmp_path)
    assert metrics["gradprobe/findings"] == {5: float(len(findings))}
    assert metrics["gradprobe/findings/GP201"] == {5: 2.0}
    norms = metrics["gradprobe/grad/fc1.weight/norm"]
    assert sorted(norms) == [0, 2, 4]
    assert math.isnan(norms[4])
    events = _events(tmp_path)
    assert [e.step for e in events.Scalars("gradprobe/findings/GP202")] == [5]
    text = events.Tensors("gradprobe/findings/text_summary")[0].tensor_proto.string_val[0]
    assert b"GP201" in text and b"torch.sqrt(h - 100.0)" in text
    # Step 3 wrote NaN into the weights: step 4's histograms have nothing to draw.
    assert [e.step for e in events.Histograms("gradprobe/weight/fc1.weight")] == [0, 2]
    assert [e.step for e in events.Histograms("gradprobe/grad/fc1.weight")] == [0, 2]
    # and as text to the `gradprobe` Python logger
    assert any("GP201" in r.getMessage() and "sqrt" in r.getMessage() for r in caplog.records)


def test_a_healthy_fit_is_silent_and_its_statistics_are_the_models(tmp_path: Path) -> None:
    model = Regressor()
    callback = GradprobeCallback(sample_every=2)
    _fit(tmp_path, model, callback)
    assert callback.findings == []
    metrics = _csv_metrics(tmp_path)
    assert metrics["gradprobe/findings"] == {5: 0.0}
    logged = metrics["gradprobe/grad/fc1.weight/norm"]
    assert sorted(logged) == [0, 2, 4]
    for step, value in logged.items():
        assert value == pytest.approx(model.grad_norms[step], rel=1e-5)
    assert "gradprobe/update_ratio/fc1.weight" in metrics  # the trainer's optimizer is watched
    assert str(callback) == "gradprobe: no findings in this fit"


def test_validation_batches_are_watch_steps_of_their_own(tmp_path: Path) -> None:
    callback = GradprobeCallback(sample_every=1, record=False)
    _fit(tmp_path, Regressor(), callback, steps=6, validate=True)
    session = callback.session
    assert session is not None
    # 2 sanity-check batches, then 3 training steps, 2 validation batches, 3 more, 2 more
    pattern = [record.grad_enabled for record in session.history]
    assert pattern == [False] * 2 + [True] * 3 + [False] * 2 + [True] * 3 + [False] * 2
    assert all(len(r.activations) == 3 for r in session.history)  # no step mixes two batches
    logged = _csv_metrics(tmp_path)["gradprobe/grad/fc1.weight/norm"]
    assert sorted(logged) == [0, 1, 2, 3, 4, 5]  # training steps only, by the trainer's count
    assert callback.findings == []


def test_a_fit_that_raises_leaves_nothing_attached(tmp_path: Path) -> None:
    model = Regressor(fail_at=2)
    probe = nn.Linear(1, 1)
    before = attached(model, None), attached(probe, None)
    callback = GradprobeCallback(sample_every=1)
    with pytest.raises(ValueError, match="gave up"):
        _fit(tmp_path, model, callback)
    assert model.optimizer is not None
    assert (attached(model, None), attached(probe, None)) == before
    assert attached(model, model.optimizer)["optimizer hooks"] == ({}, {})
    assert callback.session is not None and not callback.session.open
    assert callback.session.steps == 3  # two finished steps and the one that raised
    assert callback.findings == []  # a healthy model: the error is not an autograd problem
    recording = callback.recording
    assert recording is not None and isinstance(recording.error, ValueError)


def test_options_are_checked_when_the_callback_is_made() -> None:
    with pytest.raises(GradprobeValueError, match="sample_every"):
        GradprobeCallback(sample_every=0)
    with pytest.raises(GradprobeTypeError, match=r"record=.*'yes'"):
        GradprobeCallback(record="yes")  # type: ignore[arg-type]
    with pytest.raises(GradprobeValueError, match="optimizer"):
        GradprobeCallback(watch_options={"optimizer": None})
    with pytest.raises(GradprobeTypeError, match="watch_options"):
        GradprobeCallback(watch_options=["modules"])  # type: ignore[arg-type]
    with pytest.raises(GradprobeTypeError, match=r"'explode'.*takes modules, history"):
        GradprobeCallback(watch_options={"explode": 1e3})
    GradprobeCallback(watch_options={"exploding": 1e3, "modules": ["fc1"]})  # fine


def test_without_lightning_the_import_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("lightning", "lightning.pytorch", "pytorch_lightning"):
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "gradprobe.integrations.lightning")
    with pytest.raises(IntegrationNotFoundError, match=r'pip install "gradprobe\[lightning\]"'):
        import gradprobe.integrations.lightning  # noqa: F401
