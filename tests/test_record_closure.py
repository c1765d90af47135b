"""record() with ``optimizer.step(closure)``: the closure is the user's forward and backward
(LBFGS, Lightning's automatic optimization), not the optimizer's update, so a NaN made
there is blamed on its line like one made outside a step."""

from __future__ import annotations

import inspect

import pytest
import torch
from torch import nn

import gradprobe


def _train(use_closure: bool, closure_kw: bool = False) -> list[gradprobe.Finding]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(8, 4), torch.randn(8)
    with gradprobe.record() as rec:
        for step in range(5):

            def closure(step: int = step) -> torch.Tensor:
                opt.zero_grad()
                h = model(x).squeeze(-1)
                if step == 3:
                    h = torch.sqrt(h - 100.0)  # planted NaN
                loss = ((h - y) ** 2).mean()
                loss.backward()
                return loss

            if not use_closure:
                closure()
                opt.step()
            elif closure_kw:
                opt.step(closure=closure)
            else:
                opt.step(closure)
    return rec.findings


_PLANTED = next(
    number
    for number, line in enumerate(
        inspect.getsource(_train).splitlines(), _train.__code__.co_firstlineno
    )
    if "# planted NaN" in line
)


@pytest.mark.parametrize(
    ("use_closure", "closure_kw"),
    [(False, False), (True, False), (True, True)],
    ids=["backward-then-step", "step(closure)", "step(closure=closure)"],
)
def test_a_nan_made_inside_a_closure_is_caused_by_its_line(
    use_closure: bool, closure_kw: bool
) -> None:
    findings = _train(use_closure, closure_kw)
    assert [f.code for f in findings] == ["GP201", "GP202"]
    cause = findings[0].cause
    assert cause is not None and cause.line == _PLANTED
    assert "forward pass came from sqrt" in findings[0].message


def test_a_healthy_closure_loop_is_silent_and_the_step_still_updates() -> None:
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = torch.optim.LBFGS(model.parameters(), max_iter=3)
    x, y = torch.randn(16, 3), torch.randn(16, 1)
    before = model.weight.detach().clone()
    calls = 0

    def closure() -> torch.Tensor:
        nonlocal calls
        calls += 1
        opt.zero_grad()
        loss = (model(x) - y).pow(2).mean()
        loss.backward()
        return loss

    with gradprobe.record() as rec:
        for _ in range(2):
            opt.step(closure)
    assert rec.findings == []
    assert calls > 2  # LBFGS called the wrapped closure several times per step
    assert not torch.equal(model.weight, before)
