"""GP116 for a model built a second time after the optimizer collected the parameters of
the first instance: the second instantiation is the cause, the optimizer its context. A
model and optimizer built anew together (a fold of cross-validation) stay silent."""

from __future__ import annotations

from pathlib import Path

import pytest
from _run import diagnose, line_of, roles

_TWICE = """
import torch
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        return self.head(self.body(x).relu())

{first}
opt = torch.optim.SGD(model.parameters(), lr=0.1)  # the optimizer
{second}
x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
for step in range(3):
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
"""


@pytest.mark.parametrize(
    "first",
    ["model = Net()", "first = model = Net()"],  # the first instance dropped, or kept alive
)
def test_a_model_built_again_after_the_optimizer_names_the_second_instantiation(
    tmp_path: Path, first: str
) -> None:
    found, text = diagnose(tmp_path, _TWICE.format(first=first, second="model = Net()  # again"))
    (finding,) = [f for f in found if f.code == "GP116"]
    assert roles(finding) == [
        ("cause", line_of(text, "# again")),
        ("created", line_of(text, "# the optimizer")),
    ]
    assert finding.details["how"] == "built again"


def test_a_model_and_its_optimizer_built_again_together_are_silent(tmp_path: Path) -> None:
    second = "model = Net()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)"
    found, _ = diagnose(tmp_path, _TWICE.format(first="model = Net()", second=second))
    assert [f.code for f in found] == []


def test_another_model_of_a_different_shape_is_not_taken_for_a_second_instance(
    tmp_path: Path,
) -> None:
    """The optimizer over a smaller model, never used: not this model's first instance."""
    first = "model = nn.Linear(4, 2)"
    found, _ = diagnose(tmp_path, _TWICE.format(first=first, second="model = Net()"))
    assert [f.details.get("how") for f in found if f.code == "GP116"] == []


def test_a_reference_model_built_after_the_trained_one_is_silent(tmp_path: Path) -> None:
    """The first model trained (its optimizer stepped gradients); a second instance built
    afterwards to compare against (a gradient-accumulation check) is another model."""
    source = _TWICE.format(first="model = Net()", second="") + (
        "opt.zero_grad()  # the trained model's gradients are None again\n"
        "ref = Net()\n"
        "ref.load_state_dict(model.state_dict())\n"
        "nn.functional.cross_entropy(ref(x), y).backward()\n"
        "print([p.grad.norm() for p in ref.parameters()])\n"
    )
    found, _ = diagnose(tmp_path, source)
    assert [f.code for f in found if f.code == "GP116"] == []
