"""GP110 (gradients dropped between backward and step) is work thrown away only when
nobody looked at those gradients: a gradient check or a comparison reads them first."""

from __future__ import annotations

import textwrap
from pathlib import Path

from gradprobe.diagnose import diagnose_script

_LOOP = """
import torch
from torch import nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(8, 4)
    model(x).pow(2).mean().backward()
    {between}
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()
"""


def causes(tmp_path: Path, between: str) -> list[tuple[str, int | None]]:
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(_LOOP.format(between=between)).lstrip("\n"))
    result = diagnose_script(script)
    assert result.exit_code == 0
    return [(f.code, loc.line) for f in result.findings for loc in f.locations]


def test_zeroing_unread_gradients_before_the_step_is_named(tmp_path: Path) -> None:
    assert causes(tmp_path, "pass") == [("GP110", 10)]  # opt.zero_grad()


def test_zeroing_gradients_that_were_read_first_is_silent(tmp_path: Path) -> None:
    read = "first = [p.grad.clone() for p in model.parameters()]"
    assert causes(tmp_path, read) == []
