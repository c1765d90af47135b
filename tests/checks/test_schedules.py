"""GP166: a learning-rate schedule that drove the learning rate to nothing while the
optimizer kept stepping; and the schedules people use correctly, which must stay silent."""

from __future__ import annotations

from pathlib import Path

import pytest
from _run import diagnose, line_of, roles

_HEAD = """
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
batches = [torch.randn(8, 4) for _ in range(25)]
"""

_LOOP = """
for epoch in range(3):
    for x in batches:
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
        {per_batch}
    {per_epoch}
"""


def found(tmp_path: Path, schedule: str, per_batch: str = "", per_epoch: str = "") -> tuple:
    body = f"scheduler = {schedule}  # the schedule\n" + _LOOP.format(
        per_batch=per_batch or "pass", per_epoch=per_epoch or "pass"
    )
    findings, text = diagnose(tmp_path, _HEAD + body)
    return [(f.code, roles(f)) for f in findings], text, findings


def test_a_per_epoch_schedule_stepped_every_batch_names_the_step_call(tmp_path: Path) -> None:
    codes, text, (finding,) = found(
        tmp_path,
        "torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)",
        per_batch="scheduler.step()  # every batch",
    )
    assert codes == [
        (
            "GP166",
            [
                ("cause", line_of(text, "# every batch")),
                ("created", line_of(text, "# the schedule")),
            ],
        )
    ]
    assert finding.details["scheduler"] == "StepLR"
    assert finding.details["scheduler_steps"] == finding.details["optimizer_steps"] == 75


def test_a_schedule_stepped_per_epoch_that_decays_too_fast_names_its_construction(
    tmp_path: Path,
) -> None:
    codes, text, _ = found(
        tmp_path,
        "torch.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 1e-9 ** (epoch + 1))",
        per_epoch="scheduler.step()  # once per epoch",
    )
    assert codes == [
        (
            "GP166",
            [
                ("cause", line_of(text, "# the schedule")),
                ("read", line_of(text, "# once per epoch")),
            ],
        )
    ]


@pytest.mark.parametrize(
    ("schedule", "per_batch", "per_epoch"),
    [
        ("torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)", "", "scheduler.step()"),
        (
            "torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=75)",
            "scheduler.step()",
            "",
        ),
        ("torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=75)", "scheduler.step()", ""),
        (
            "torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, s / 10))",
            "scheduler.step()",
            "",
        ),
        (
            "torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.1, patience=0)",
            "",
            "scheduler.step(1.0)",
        ),
    ],
    ids=["per-epoch", "one-cycle", "cosine", "warmup-from-zero", "plateau"],
)
def test_schedules_used_as_meant_are_silent(
    tmp_path: Path, schedule: str, per_batch: str, per_epoch: str
) -> None:
    codes, _, _ = found(tmp_path, schedule, per_batch=per_batch, per_epoch=per_epoch)
    assert codes == []


def test_a_learning_rate_set_by_hand_is_not_a_schedule(tmp_path: Path) -> None:
    findings, _ = diagnose(
        tmp_path,
        _HEAD
        + """
for group in opt.param_groups:
    group["initial_lr"] = group["lr"]
    group["lr"] = 1e-12
for x in batches:
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()
""",
    )
    assert findings == []
