"""Invariant 6 of the training step: the model holds each module once (GP184).

One module object at two slots of a ModuleList or Sequential (``[block] * n``), or handed to
every element of one (built once before the comprehension), is named at the line that made
it so. Sharing that is meant stays silent: one module called twice, one registered at two
unrelated places, a tie of one Parameter, an activation object repeated, deep copies."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gradprobe.diagnose import diagnose_script
from gradprobe.findings import Finding

_STACK = """
    import copy
    import torch
    from torch import nn

    torch.manual_seed(0)

    class Block(nn.Module):
        def __init__(self, dim, ff=None):
            super().__init__()
            self.ff = ff if ff is not None else nn.Linear(dim, dim)
            self.norm = nn.LayerNorm(dim)

        def forward(self, x):
            return x + self.ff(self.norm(x))

    class Net(nn.Module):
        def __init__(self, dim=8, n=3):
            super().__init__()
            {build}

        def forward(self, x):
            for block in self.blocks:
                x = block(x)
            return x

    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(16, 8)
    for step in range(3):
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def _run(tmp_path: Path, build: str) -> tuple[list[Finding], list[str]]:
    script = tmp_path / "train.py"
    lines = textwrap.dedent(build).strip().splitlines()
    body = "\n            ".join(lines)
    text = textwrap.dedent(_STACK.format(build=body)).lstrip("\n")
    script.write_text(text)
    result = diagnose_script(script)
    assert result.exit_code == 0
    return [f for f in result.findings if f.code == "GP184"], text.splitlines()


def _line(lines: list[str], text: str) -> int:
    return next(n for n, line in enumerate(lines, start=1) if text in line)


def _causes(finding: Finding) -> list[int]:
    return [loc.line for loc in finding.locations if loc.role == "cause"]


def test_list_multiplication_names_the_container(tmp_path: Path) -> None:
    found, lines = _run(tmp_path, "self.blocks = nn.ModuleList([Block(dim)] * n)")
    (finding,) = found
    assert _causes(finding) == [_line(lines, "[Block(dim)] * n")]
    assert finding.details["places"] == ["blocks.0", "blocks.1"]


def test_a_sequential_of_one_repeated_layer(tmp_path: Path) -> None:
    found, lines = _run(tmp_path, "self.blocks = nn.Sequential(*[Block(dim)] * n)")
    (finding,) = found
    assert _causes(finding) == [_line(lines, "[Block(dim)] * n")]


def test_one_part_handed_to_every_element_names_where_it_was_built(tmp_path: Path) -> None:
    build = """
        ff = nn.Linear(dim, dim)
        self.blocks = nn.ModuleList([Block(dim, ff) for _ in range(n)])
    """
    found, lines = _run(tmp_path, build)
    (finding,) = found
    assert _causes(finding) == [_line(lines, "ff = nn.Linear(dim, dim)")]
    assert finding.details["places"] == ["blocks.0.ff", "blocks.1.ff"]
    created = [loc.line for loc in finding.locations if loc.role == "created"]
    assert created == [_line(lines, "self.blocks = nn.ModuleList")]


@pytest.mark.parametrize(
    "build",
    [
        # one layer per slot
        "self.blocks = nn.ModuleList([Block(dim) for _ in range(n)])",
        # deep copies of a prototype are separate objects
        "self.blocks = nn.ModuleList([copy.deepcopy(Block(dim)) for _ in range(n)])",
        # one activation object at every slot holds no state
        "self.inp = nn.Linear(dim, dim)\nself.blocks = nn.Sequential(self.inp, *[nn.ReLU()] * n)",
        # one block registered once, applied at every depth: sharing meant
        "self.shared = Block(dim)\nself.blocks = [self.shared] * n",
        # one embedding at two unrelated places (an encoder and a decoder)
        (
            "self.embed = nn.Linear(dim, dim)\nself.blocks = nn.ModuleList("
            "[nn.Sequential(self.embed, nn.ReLU()), nn.Sequential(nn.Tanh(), self.embed)])"
        ),
    ],
)
def test_meant_sharing_is_silent(tmp_path: Path, build: str) -> None:
    found, _ = _run(tmp_path, build)
    assert found == []


def test_silent_without_a_step(tmp_path: Path) -> None:
    """A script that never steps trains nothing: an inspection, not a training run."""
    script = tmp_path / "train.py"
    script.write_text(
        "import torch\nfrom torch import nn\n"
        "blocks = nn.ModuleList([nn.Linear(4, 4)] * 2)\n"
        "blocks[0](torch.randn(2, 4)).sum().backward()\n"
    )
    result = diagnose_script(script)
    assert [f for f in result.findings if f.code == "GP184"] == []
