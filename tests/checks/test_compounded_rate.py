"""GP172: a factor the user's code applies to ``param_group["lr"]`` at every step, so it
compounds and takes the learning rate to nothing; and the hand-written schedules people use
correctly, which must stay silent."""

from __future__ import annotations

from pathlib import Path

import pytest
from _run import diagnose, line_of, roles

_HEAD = """
import math

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
groups = [
    {"params": model[0].parameters(), "lr": 0.1, "scale": 0.25},
    {"params": model[2].parameters(), "lr": 0.1, "scale": 1.0},
]
opt = torch.optim.SGD(groups, lr=0.1, momentum=0.9)  # the optimizer
batches = [torch.randn(8, 4) for _ in range(50)]
"""


def found(tmp_path: Path, body: str) -> tuple[list, str]:
    findings, text = diagnose(tmp_path, _HEAD + body)
    return [f for f in findings if f.code == "GP172"], text


def test_a_layer_scale_applied_inside_a_wrapped_step_names_the_write(tmp_path: Path) -> None:
    (finding,), text = found(
        tmp_path,
        """
class LayerDecay:
    def __init__(self, optimizer):
        self.optimizer = optimizer

    def step(self):
        for group in self.optimizer.param_groups:
            group["lr"] = group["lr"] * group["scale"]  # compounds
        self.optimizer.step()  # the step


wrapped = LayerDecay(opt)
for x in batches:
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    wrapped.step()
""",
    )
    assert roles(finding) == [
        ("cause", line_of(text, "# compounds")),
        ("created", line_of(text, "# the optimizer")),
        ("read", line_of(text, "# the step")),
    ]
    assert finding.details["groups"] == [0]
    assert finding.details["factor"] == 0.25
    assert finding.details["steps_that_low"] >= 20


def test_a_per_epoch_helper_called_every_batch_names_the_call(tmp_path: Path) -> None:
    (finding,), text = found(
        tmp_path,
        """
def decay(optimizer, gamma):
    for group in optimizer.param_groups:
        group["lr"] *= gamma  # the helper


for x in batches:
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()
    decay(opt, 0.5)  # meant once per epoch
""",
    )
    # the helper is right for a per-epoch decay: calling it every batch is the mistake
    assert roles(finding)[:2] == [
        ("cause", line_of(text, "# meant once per epoch")),
        ("read", line_of(text, "# the helper")),
    ]
    assert finding.details["groups"] == [0, 1]


@pytest.mark.parametrize(
    "body",
    [
        # the scale applied once, when the groups are built
        """
for group in opt.param_groups:
    group["lr"] = group["lr"] * group["scale"]
for x in batches:
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()
""",
        # step decay by hand: a factor every 10 steps
        """
for i, x in enumerate(batches):
    if i and i % 10 == 0:
        for group in opt.param_groups:
            group["lr"] *= 0.1
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()
""",
        # exponential decay by hand, slow enough for the run
        """
for x in batches:
    for group in opt.param_groups:
        group["lr"] *= 0.95
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()
""",
        # warmup from zero, then a cosine to zero, from the base rate
        """
for i, x in enumerate(batches):
    warm = min(1.0, i / 5)
    for group in opt.param_groups:
        group["lr"] = 0.1 * warm * 0.5 * (1 + math.cos(math.pi * i / len(batches)))
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()
""",
        # a per-group scale under a scheduler (LambdaLR keeps initial_lr)
        """
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: 0.97 ** i)
for x in batches:
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()
    sched.step()
""",
    ],
    ids=["once", "step_decay", "slow_exponential", "warmup_cosine", "lambda_lr"],
)
def test_hand_written_schedules_that_keep_a_rate_are_silent(tmp_path: Path, body: str) -> None:
    assert found(tmp_path, body)[0] == []


def test_a_rate_set_to_zero_from_a_base_is_not_compounding(tmp_path: Path) -> None:
    # a linear decay that ends early leaves the rate at 0: the schedule is wrong, but no
    # factor compounds, and GP172 names only the compounding write
    body = """
for i, x in enumerate(batches):
    for group in opt.param_groups:
        group["lr"] = 0.1 * max(0.0, 1 - i / 10)
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()
"""
    assert found(tmp_path, body)[0] == []
