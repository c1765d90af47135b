"""GP173: a fixed table (a sinusoidal positional encoding) registered as a trainable
``nn.Parameter`` that an optimizer steps; and the tables people keep or train on purpose,
which must stay silent."""

from __future__ import annotations

from pathlib import Path

import pytest
from _run import diagnose, line_of, roles

_SCRIPT = """
import math

import torch
from torch import nn

torch.manual_seed(0)


def sinusoid(n, d):
    position = torch.arange(n, dtype=torch.float32)[:, None]
    div = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-math.log(1e4) / d))
    table = torch.zeros(n, d)
    table[:, 0::2] = torch.sin(position * div)
    table[:, 1::2] = torch.cos(position * div)
    return table


class Encoder(nn.Module):
    def __init__(self, n=8, d=6, learnable=False):
        super().__init__()
        self.embed = nn.Linear(3, d)
{table}
        self.out = nn.Linear(d, 1)

    def forward(self, x):
        return self.out(self.embed(x) + self.pe[: x.shape[1]])


model = Encoder()
opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)  # the optimizer
for _ in range(3):
    opt.zero_grad()
    model(torch.randn(4, 8, 3)).pow(2).mean().backward()
    opt.step()
"""


def found(tmp_path: Path, table: str) -> tuple[list, str]:
    findings, text = diagnose(tmp_path, _SCRIPT.format(table=table))
    return [f for f in findings if f.code == "GP173"], text


@pytest.mark.parametrize(
    "table",
    [
        # the table from a helper of the same file
        "        self.pe = nn.Parameter(sinusoid(n, d))  # trained",
        # the table built inline, as in the Transformer tutorials
        """        pe = torch.zeros(n, d)
        pos = torch.arange(n).float()[:, None]
        pe[:, 0::2] = torch.sin(pos / 1e4 ** (torch.arange(0, d, 2) / d))
        pe[:, 1::2] = torch.cos(pos / 1e4 ** (torch.arange(0, d, 2) / d))
        self.pe = nn.Parameter(pe)  # trained""",
    ],
    ids=["helper", "inline"],
)
def test_a_sinusoid_table_in_a_parameter_is_named(tmp_path: Path, table: str) -> None:
    (finding,), text = found(tmp_path, table)
    assert roles(finding) == [
        ("cause", line_of(text, "# trained")),
        ("read", line_of(text, "# the optimizer")),
    ]
    assert finding.details["parameter"] == "pe"
    assert {"sin", "cos"} <= set(finding.details["built_from"])


@pytest.mark.parametrize(
    "table",
    [
        '        self.register_buffer("pe", sinusoid(n, d))',
        "        self.pe = nn.Parameter(sinusoid(n, d), requires_grad=False)",
        "        self.pe = nn.Parameter(sinusoid(n, d), requires_grad=True)  # meant",
        """        if learnable:
            self.pe = nn.Parameter(sinusoid(n, d))
        else:
            self.register_buffer("pe", sinusoid(n, d))""",
        # a learned embedding initialised at random
        "        self.pe = nn.Parameter(torch.randn(n, d) * 0.02)",
        # random Fourier features of positions: drawn, not a formula
        "        self.pe = nn.Parameter(torch.sin(torch.arange(n)[:, None] * torch.randn(d)))",
        # a gain of ones is a weight, not a table
        "        self.pe = nn.Parameter(torch.ones(n, d))",
    ],
    ids=["buffer", "frozen", "explicit", "switch", "random", "fourier", "ones"],
)
def test_tables_kept_fixed_or_trained_on_purpose_are_silent(tmp_path: Path, table: str) -> None:
    assert found(tmp_path, table)[0] == []
