"""Conclusions drawn while objects are alive: a model and optimizer local to ``main()`` are
freed before the recording ends, so the checks that read them conclude just before that.
The same bug is reported inside ``main()`` as at module level, a correct script stays
clean, and gradprobe keeps nothing alive and leaves no ``__del__`` behind."""

from __future__ import annotations

import gc
import textwrap
import weakref
from pathlib import Path

import pytest
import torch

import gradprobe
from gradprobe.diagnose import diagnose_script

NET = """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Linear(8, 16)
        self.head = nn.Linear(16, 2)

    def forward(self, x):
        h = self.features(x).relu()
        return self.head(h{cut})
"""

LOOP = """
torch.manual_seed(0)
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    opt.zero_grad()
    loss = model(torch.randn(4, 8)).pow(2).mean()
    loss.backward()
    opt.step()
"""


def script(tmp_path: Path, *, cut: str, in_main: bool) -> Path:
    body = textwrap.dedent(LOOP)
    if in_main:
        body = (
            "def main():\n"
            + textwrap.indent(body, "    ")
            + '\n\nif __name__ == "__main__":\n    main()\n'
        )
    path = tmp_path / ("main.py" if in_main else "flat.py")
    path.write_text(textwrap.dedent(NET).format(cut=cut) + "\n" + body)
    return path


def summary(path: Path) -> list[tuple[str, list[tuple[str, int]]]]:
    return [
        (f.code, [(loc.role, loc.line) for loc in f.locations])
        for f in diagnose_script(path).findings
    ]


def test_a_detach_bug_inside_main_is_reported_as_at_module_level(tmp_path: Path) -> None:
    flat = summary(script(tmp_path, cut=".detach()", in_main=False))
    inside = summary(script(tmp_path, cut=".detach()", in_main=True))
    assert [code for code, _ in flat] == ["GP107"]
    assert inside == flat  # same code, same cause line (line 14, in forward)
    assert ("cause", 14) in inside[0][1]


def test_the_correct_script_inside_main_stays_clean(tmp_path: Path) -> None:
    assert summary(script(tmp_path, cut="", in_main=True)) == []


def test_a_model_per_fold_is_not_reported(tmp_path: Path) -> None:
    path = tmp_path / "folds.py"
    path.write_text(
        textwrap.dedent(NET).format(cut="")
        + textwrap.dedent(
            """
            def fold(seed):
                torch.manual_seed(seed)
                model = Net()
                opt = torch.optim.Adam(model.parameters(), lr=1e-3)
                for _ in range(2):
                    opt.zero_grad()
                    model(torch.randn(4, 8)).pow(2).mean().backward()
                    opt.step()
                return model.head.weight.sum().item()


            def main():
                return [fold(seed) for seed in range(4)]


            main()
            """
        )
    )
    assert summary(path) == []


class Cut(torch.nn.Module):
    def __init__(self, cut: bool) -> None:
        super().__init__()
        self.first = torch.nn.Linear(4, 4)
        self.last = torch.nn.Linear(4, 1)
        self.cut = cut

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.first(x).relu()
        return self.last(h.detach() if self.cut else h)


def train_in_a_function(cut: bool) -> weakref.ref[torch.nn.Module]:
    model = Cut(cut)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(3, 4)).sum().backward()
    opt.step()
    return weakref.ref(model)


def test_the_dying_model_is_freed_and_nothing_stays_installed() -> None:
    assert "__del__" not in torch.nn.Module.__dict__
    with gradprobe.record() as rec:
        ref = train_in_a_function(cut=True)
        gc.collect()
        assert ref() is None  # concluding on it did not keep it alive
        assert "__del__" in torch.nn.Module.__dict__
    assert "__del__" not in torch.nn.Module.__dict__
    assert "__del__" not in torch.optim.Optimizer.__dict__
    assert [f.code for f in rec.findings] == ["GP107"]


def test_nothing_stays_installed_when_the_code_raises() -> None:
    with pytest.raises(ZeroDivisionError), gradprobe.record():
        train_in_a_function(cut=False)
        1 / 0  # noqa: B018
    assert "__del__" not in torch.nn.Module.__dict__
    assert "__del__" not in torch.optim.Optimizer.__dict__


ROUTED = """
import torch
from torch import nn


class Experts(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(8, 4)
        self.experts = nn.ModuleList(nn.Linear(8, 8) for _ in range(4))
        self.spare = nn.Linear(8, 8)

    def forward(self, x):
        pick = self.gate(x).argmax(-1).tolist()
        out = torch.stack([self.experts[i](x[n]) for n, i in enumerate(pick)])
        return out * self.gate(x).softmax(-1).max(-1).values.unsqueeze(-1)


def step():
    model = Experts()
    model(torch.randn(2, 8)).pow(2).mean().backward()


torch.manual_seed(0)
step()
"""


def test_experts_a_router_did_not_pick_are_not_reported(tmp_path: Path) -> None:
    path = tmp_path / "experts.py"
    path.write_text(textwrap.dedent(ROUTED))
    found = summary(path)
    # two samples pick at most two of the four experts; the spare Linear, outside the
    # ModuleList, is never called: that one is a mistake worth naming
    assert [code for code, _ in found] == ["GP107"]
    assert diagnose_script(path).findings[0].details["parameters"] == ["spare.weight", "spare.bias"]


def test_gradprobe_own_torch_calls_are_not_recorded() -> None:
    """The mode is wrapped for dynamo; its caller is above that wrapper, and gradprobe's
    own work (statistics, traces) is not the user's computation. (The walk that finds new
    nodes from each call's results; torch 2.14's node-creation hook hands over every node.)"""
    own = Path(gradprobe.__file__).with_name("_own_work.py")  # a file inside the package
    code = compile("y = x * 2", str(own), "exec")
    with gradprobe.record(node_hook=False) as rec:
        x = torch.ones(3, requires_grad=True)
        exec(code, {"x": x})  # noqa: S102
        assert not any(r.op == "MulBackward0" for r in rec._events.nodes.values())
        z = x * 2  # the user's own
        assert [r.op for r in rec._events.nodes.values()] == ["MulBackward0"]
    del z
