"""Issue 25, invariant 2: every gradient a backward produces is consumed. Correct code that
brushes against it stays silent under GP116: an optimizer holding every learning module (in
one group or several), and a model trained in part on purpose."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gradprobe.diagnose import diagnose_script
from gradprobe.findings import Finding

_LOOP = """
    import torch
    from torch import nn

    torch.manual_seed(0)

    class Centers(nn.Module):
        def __init__(self, classes=3, dim=4):
            super().__init__()
            self.centers = nn.Parameter(torch.randn(classes, dim))

        def forward(self, feats, labels):
            return (feats - self.centers[labels]).pow(2).sum(1).mean()

    model = nn.Sequential(nn.Linear(6, 4), nn.ReLU())
    head = nn.Linear(4, 3)
    centers = Centers()
    {optimizer}
    x, y = torch.randn(16, 6), torch.randint(0, 3, (16,))
    for step in range(4):
        feats = model(x)
        loss = nn.functional.cross_entropy(head(feats), y) + 0.1 * centers(feats, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def _gp116(tmp_path: Path, source: str) -> tuple[list[Finding], list[str]]:
    script = tmp_path / "train.py"
    text = textwrap.dedent(source).lstrip("\n")
    script.write_text(text)
    result = diagnose_script(script)
    assert result.exit_code == 0
    return [f for f in result.findings if f.code == "GP116"], text.splitlines()


@pytest.mark.parametrize(
    "optimizer",
    [
        # every parameter held
        (
            "opt = torch.optim.SGD([*model.parameters(), *head.parameters(), "
            "*centers.parameters()], lr=0.1)"
        ),
        # the centres in a group of their own
        (
            "opt = torch.optim.SGD([{'params': [*model.parameters(), *head.parameters()]}, "
            "{'params': centers.parameters(), 'lr': 0.5}], lr=0.1)"
        ),
    ],
)
def test_an_optimizer_holding_every_learning_module_is_silent(
    tmp_path: Path, optimizer: str
) -> None:
    found, _ = _gp116(tmp_path, _LOOP.format(optimizer=optimizer))
    assert found == []


def test_training_part_of_one_model_on_purpose_is_silent(tmp_path: Path) -> None:
    """A head-only optimizer over a model whose backbone still requires grad: a choice."""
    found, _ = _gp116(
        tmp_path,
        """
        import torch
        from torch import nn

        model = nn.Sequential(nn.Linear(6, 4), nn.ReLU(), nn.Linear(4, 3))
        opt = torch.optim.SGD(model[2].parameters(), lr=0.1)
        x, y = torch.randn(16, 6), torch.randint(0, 3, (16,))
        for step in range(3):
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )
    assert found == []
