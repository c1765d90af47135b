"""GP130: weight tying done with a copy (nn.Parameter(embed.weight.clone()))."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gradprobe.diagnose import diagnose_script
from gradprobe.findings import Finding


def run(tmp_path: Path, source: str) -> tuple[list[Finding], str]:
    script = tmp_path / "lm.py"
    text = textwrap.dedent(source).lstrip("\n")
    script.write_text(text)
    result = diagnose_script(script)
    assert result.exit_code == 0
    return [f for f in result.findings if f.code == "GP130"], text


_LM = """
    import copy
    import torch
    from torch import nn

    class LM(nn.Module):
        def __init__(self, vocab=30, dim=8):
            super().__init__()
            self.embed = nn.Embedding(vocab, dim)
            self.out = nn.Linear(dim, vocab, bias=False)
            {tie}

        def forward(self, x):
            return self.out(torch.tanh(self.embed(x)))

    model = LM()
    {setup}
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.5)
    for step in range(3):
        x = torch.randint(0, 30, (4, 6))
        loss = nn.functional.cross_entropy(model(x).reshape(-1, 30), x.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def test_a_cloned_tie_is_named_with_the_users_own_fix(tmp_path: Path) -> None:
    tie = "self.out.weight = nn.Parameter(self.embed.weight.clone())"
    found, text = run(tmp_path, _LM.format(tie=tie, setup="pass"))
    (finding,) = found
    (cause,) = finding.locations
    assert (cause.role, cause.line) == ("cause", text.splitlines().index(" " * 8 + tie) + 1)
    assert finding.details == {"parameter": "out.weight", "copy_of": "embed.weight"}
    assert "(self.out.weight = self.embed.weight)" in finding.message


@pytest.mark.parametrize(
    ("tie", "setup"),
    [
        ("self.out.weight = self.embed.weight", "pass"),  # tied right
        ("pass", "model.out.weight = nn.Parameter(LM().embed.weight.clone())"),  # transfer
        (  # a frozen reference copy
            "self.ref = nn.Parameter(self.embed.weight.clone(), requires_grad=False)",
            "pass",
        ),
        ("self.twin = copy.deepcopy(self.out)", "pass"),  # whole layers copied
        (  # two copies on purpose, said so
            "self.out.weight = nn.Parameter(self.embed.weight.detach().clone())",
            "pass",
        ),
    ],
    ids=["assigned", "transfer", "frozen_copy", "deepcopy", "detached_copy"],
)
def test_ties_and_deliberate_copies_are_not_named(tmp_path: Path, tie: str, setup: str) -> None:
    found, _ = run(tmp_path, _LM.format(tie=tie, setup=setup))
    assert found == []
