"""gradprobe.integrations.transformers.GradprobeCallback with the real Hugging Face Trainer:
a tiny model, a few CPU steps, a planted NaN found and logged; nothing downloaded."""

from __future__ import annotations

import logging
import math
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from _integrations import attached, line_of

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing here may reach the internet
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# transformers (with accelerate) is in the test extra; the skip is for bare installs.
transformers = pytest.importorskip("transformers")
pytest.importorskip("accelerate")

from gradprobe.errors import IntegrationNotFoundError
from gradprobe.integrations.transformers import GradprobeCallback


class Regressor(nn.Module):
    """What the Trainer needs of a model: keyword inputs, a ``{"loss": ...}`` output.
    ``nan_at`` plants log(negative) in the forward of that training step."""

    def __init__(self, nan_at: int | None = None, fail_at: int | None = None) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.act = nn.Tanh()
        self.fc2 = nn.Linear(8, 1)
        self.nan_at = nan_at
        self.fail_at = fail_at
        self.step = 0

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
        step = self.step
        if self.training:
            self.step += 1
        if self.training and step == self.fail_at:
            raise ValueError("the batch was malformed")
        out = self.fc2(self.act(self.fc1(x))).squeeze(-1)
        if self.training and step == self.nan_at:
            out = torch.log(out - 100.0)  # planted NaN
        return {"loss": ((out - labels) ** 2).mean(), "logits": out}


class Pairs(torch.utils.data.Dataset[dict[str, torch.Tensor]]):
    def __init__(self, n: int) -> None:
        generator = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 4, generator=generator)
        self.y = torch.randn(n, generator=generator)

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        return {"x": self.x[i], "labels": self.y[i]}


def _trainer(tmp_path: Path, model: nn.Module, callback: GradprobeCallback, **extra: Any) -> Any:
    torch.manual_seed(0)
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path / "out"),
        max_steps=6,
        per_device_train_batch_size=8,
        per_device_eval_batch_size=8,
        learning_rate=0.05,
        lr_scheduler_type="constant",
        max_grad_norm=1e9,  # measured (logged as grad_norm), never clipped
        logging_steps=1,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
        disable_tqdm=True,
        **extra,
    )
    return transformers.Trainer(
        model=model,
        args=args,
        train_dataset=Pairs(48),
        eval_dataset=Pairs(16),
        callbacks=[callback],
    )


def _ours(history: list[dict[str, Any]]) -> dict[int, dict[str, float]]:
    """The callback's log_history entries, by step."""
    found: dict[int, dict[str, float]] = {}
    for entry in history:
        values = {k: v for k, v in entry.items() if k.startswith("gradprobe/")}
        if values:
            found.setdefault(entry["step"], {}).update(values)
    return found


def test_a_planted_nan_is_found_with_its_line_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(tmp_path / "tb"))
    callback = GradprobeCallback(sample_every=2, writer=writer)
    trainer = _trainer(tmp_path, Regressor(nan_at=3), callback)
    with caplog.at_level(logging.WARNING, logger="gradprobe"), callback:
        trainer.train()
    writer.close()

    findings = callback.findings
    assert [f.code for f in findings[:2]] == ["GP201", "GP202"]  # record(): the line
    cause = findings[0].cause
    assert cause is not None
    assert (cause.file, cause.line) == (__file__, line_of(Regressor.forward, "planted"))
    assert "log" in findings[0].message
    watched = {f.code: f for f in findings[2:]}  # watch(): the step and the module
    assert watched["GP202"].details["step"] == 3 and watched["GP202"].module == "fc2"
    assert watched["GP201"].details["step"] == 4 and watched["GP201"].module == "fc1"

    ours = _ours(trainer.state.log_history)
    # Sampled steps 0, 2, 4 are the Trainer's steps 1, 3, 5 (it counts from 1); the
    # findings come last, at the final step.
    assert sorted(ours) == [1, 3, 5, 6]
    assert ours[6]["gradprobe/findings"] == len(findings)
    assert ours[6]["gradprobe/findings/GP201"] == 2
    assert math.isnan(ours[5]["gradprobe/grad/fc1.weight/norm"])
    events = EventAccumulator(str(tmp_path / "tb"), size_guidance={"histograms": 0, "tensors": 0})
    events.Reload()
    assert [e.step for e in events.Scalars("gradprobe/findings/GP202")] == [6]
    assert [e.step for e in events.Histograms("gradprobe/grad/fc2.weight")] == [1, 3]
    text = events.Tensors("gradprobe/findings/text_summary")[0].tensor_proto.string_val[0]
    assert b"torch.log(out - 100.0)" in text
    assert any("GP201" in r.getMessage() for r in caplog.records)


def test_a_healthy_run_is_silent_and_its_gradient_norms_are_the_trainers(tmp_path: Path) -> None:
    callback = GradprobeCallback(sample_every=1)
    trainer = _trainer(tmp_path, Regressor(), callback)
    trainer.train()
    assert callback.findings == []
    ours = _ours(trainer.state.log_history)
    assert sorted(ours) == [1, 2, 3, 4, 5, 6]
    assert ours[6]["gradprobe/findings"] == 0
    trainers = {e["step"]: e["grad_norm"] for e in trainer.state.log_history if "grad_norm" in e}
    params = ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias")
    for step, grad_norm in trainers.items():
        total = math.sqrt(sum(ours[step][f"gradprobe/grad/{p}/norm"] ** 2 for p in params))
        assert total == pytest.approx(grad_norm, rel=1e-5), step
    # the optimizer inside Accelerate's wrapper is watched: update ratios from step 2 on
    assert "gradprobe/update_ratio/fc1.weight" in ours[2]
    assert callback.session is not None and callback.session.steps == 6


def test_evaluation_batches_are_watch_steps_of_their_own(tmp_path: Path) -> None:
    callback = GradprobeCallback(sample_every=1, record=False)
    trainer = _trainer(tmp_path, Regressor(), callback, eval_strategy="steps", eval_steps=3)
    trainer.train()
    session = callback.session
    assert session is not None
    pattern = [record.grad_enabled for record in session.history]
    assert pattern == [True] * 3 + [False] * 2 + [True] * 3 + [False] * 2
    assert sorted(_ours(trainer.state.log_history)) == [1, 2, 3, 4, 5, 6]


def test_a_run_that_raises_leaves_nothing_attached(tmp_path: Path) -> None:
    model = Regressor(fail_at=2)
    before = attached(model, None)
    callback = GradprobeCallback(sample_every=1)
    trainer = _trainer(tmp_path, model, callback)
    with pytest.raises(ValueError, match="malformed"), callback:
        trainer.train()
    assert attached(model, None) == before
    session = callback.session
    assert session is not None and not session.open and session.steps == 2  # raised in step 2
    recording = callback.recording
    assert recording is not None and isinstance(recording.error, ValueError)


def test_a_new_run_closes_what_a_failed_one_left_open(tmp_path: Path) -> None:
    model = Regressor(fail_at=2)
    before = attached(model, None)
    callback = GradprobeCallback(sample_every=1, record=False)
    trainer = _trainer(tmp_path, model, callback)
    with pytest.raises(ValueError, match="malformed"):
        trainer.train()  # no `with callback:`: the protocol has no event for this
    failed = callback.session
    assert failed is not None and failed.open
    model.fail_at = None
    trainer.train()
    assert not failed.open
    assert attached(model, None) == before
    assert callback.session is not failed and callback.findings == []


def test_without_transformers_the_import_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)
    monkeypatch.delitem(sys.modules, "gradprobe.integrations.transformers")
    with pytest.raises(IntegrationNotFoundError, match=r'pip install "gradprobe\[transformers\]"'):
        import gradprobe.integrations.transformers  # noqa: F401


def test_importing_gradprobe_and_its_integrations_package_imports_no_framework() -> None:
    import subprocess

    import gradprobe

    src = str(Path(gradprobe.__file__).resolve().parent.parent)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            (
                "import sys, gradprobe, gradprobe.integrations; "
                "print(sorted(m for m in ('lightning', 'transformers', 'pytorch_lightning') "
                "if m in sys.modules))"
            ),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": src},
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
