"""Invariant 2 of the training step: every gradient backward produces is consumed (GP170).

A module left out of the optimizer is named when it is applied to what the trained
parameters compute (a loss with learnable centres, a fusion weight between trained layers),
at the optimizer's line or at the filter by layer type that built its parameter list; a
module or Parameter replaced after the optimizer collected the old one is named at the
replacement. Correct code that brushes against the invariant stays silent."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gradprobe.diagnose import diagnose_script
from gradprobe.findings import Finding

_CENTERS = """
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
        {in_loop}
    {after}
"""

_LEFT_OUT = "opt = torch.optim.SGD([*model.parameters(), *head.parameters()], lr=0.1)"


def _run(tmp_path: Path, source: str, code: str = "GP170") -> tuple[list[Finding], list[str]]:
    script = tmp_path / "train.py"
    text = textwrap.dedent(source).lstrip("\n")
    script.write_text(text)
    result = diagnose_script(script)
    assert result.exit_code == 0
    return [f for f in result.findings if f.code == code], text.splitlines()


def _centers(optimizer: str = _LEFT_OUT, in_loop: str = "", after: str = "") -> str:
    return _CENTERS.format(optimizer=optimizer, in_loop=in_loop, after=after)


def _lines(finding: Finding, role: str) -> list[int]:
    return [loc.line for loc in finding.locations if loc.role == role]


def test_a_learnable_loss_module_left_out_names_the_optimizer(tmp_path: Path) -> None:
    found, lines = _run(tmp_path, _centers())
    (finding,) = found
    assert finding.details["parameters"] == ["centers"]
    assert _lines(finding, "cause") == [lines.index(_LEFT_OUT.strip()) + 1]
    made = next(i for i, line in enumerate(lines) if "nn.Parameter(" in line) + 1
    assert _lines(finding, "created") == [made]


def test_a_read_after_the_last_backward_is_not_a_use(tmp_path: Path) -> None:
    """Printing the gradient at the end is how users notice; it consumed nothing."""
    found, _ = _run(tmp_path, _centers(after="print(centers.centers.grad.norm())"))
    assert len(found) == 1


@pytest.mark.parametrize(
    ("optimizer", "in_loop"),
    [
        # every parameter held, in one list or in a group of their own
        (
            (
                "opt = torch.optim.SGD([*model.parameters(), *head.parameters(), "
                "*centers.parameters()], lr=0.1)"
            ),
            "",
        ),
        (
            (
                "opt = torch.optim.SGD([{'params': [*model.parameters(), *head.parameters()]}, "
                "{'params': centers.parameters(), 'lr': 0.5}], lr=0.1)"
            ),
            "",
        ),
        # the centres updated by hand from their gradient, inside the loop
        (
            _LEFT_OUT,
            "with torch.no_grad(): centers.centers -= 0.5 * centers.centers.grad",
        ),
    ],
)
def test_gradients_that_are_used_are_silent(tmp_path: Path, optimizer: str, in_loop: str) -> None:
    found, _ = _run(tmp_path, _centers(optimizer, in_loop))
    assert found == []


def test_a_hook_on_the_parameter_is_a_use(tmp_path: Path) -> None:
    source = _centers().replace(
        "centers = Centers()\n",
        "centers = Centers()\n    centers.centers.register_hook(lambda g: None)\n",
    )
    found, _ = _run(tmp_path, source)
    assert found == []


@pytest.mark.parametrize(
    "body",
    [
        # a fixed extractor left requires_grad=True, applied to the data: a choice
        """
        extractor = nn.Sequential(nn.Linear(6, 8), nn.ReLU())
        head = nn.Linear(8, 3)
        opt = torch.optim.SGD(head.parameters(), lr=0.1)
        for step in range(3):
            loss = nn.functional.cross_entropy(head(extractor(x)), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        # part of one model trained on purpose (a head-only optimizer)
        """
        model = nn.Sequential(nn.Linear(6, 4), nn.ReLU(), nn.Linear(4, 3))
        opt = torch.optim.SGD(model[2].parameters(), lr=0.1)
        for step in range(3):
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        # a frozen extractor with requires_grad left on, used under no_grad
        """
        extractor = nn.Linear(6, 8)
        head = nn.Linear(8, 3)
        opt = torch.optim.SGD(head.parameters(), lr=0.1)
        for step in range(3):
            with torch.no_grad():
                feats = extractor(x)
            loss = nn.functional.cross_entropy(head(feats), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        # a prompt tuned in front of a larger network left requires_grad=True: meant fixed
        """
        prompt = nn.Parameter(torch.zeros(6))
        network = nn.Sequential(nn.Linear(6, 64), nn.ReLU(), nn.Linear(64, 3))
        opt = torch.optim.SGD([prompt], lr=0.1)
        for step in range(3):
            loss = nn.functional.cross_entropy(network(x + prompt), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        # an analysis script: gradients of a trained-elsewhere model, no optimizer
        """
        model = nn.Sequential(nn.Linear(6, 4), nn.ReLU(), nn.Linear(4, 3))
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        print([p.grad.norm().item() for p in model.parameters()])
        """,
    ],
)
def test_correct_code_near_the_invariant_is_silent(tmp_path: Path, body: str) -> None:
    head = "import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
    data = "x, y = torch.randn(16, 6), torch.randint(0, 3, (16,))\n"
    found, _ = _run(tmp_path, head + data + textwrap.dedent(body))
    assert found == []


_FILTERED = """
    import torch
    from torch import nn

    torch.manual_seed(0)

    class Fuse(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(2))
            self.proj = nn.Linear(4, 4)

        def forward(self, a, b):
            return self.proj(self.w[0] * a + self.w[1] * b)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Linear(6, 4)
            self.fuse = Fuse()
            self.head = nn.Linear(4, 3)

        def forward(self, x):
            h = self.stem(x).relu()
            return self.head(self.fuse(h, h.tanh()))

    def groups(model):
        decay = []
        for module in model.modules():
            if isinstance(module, nn.Linear):
                decay.extend(module.parameters())
        return [{"params": decay, "weight_decay": 1e-4}]

    def main():
        model = Net()
        opt = torch.optim.SGD(groups(model), lr=0.1)
        x, y = torch.randn(16, 6), torch.randint(0, 3, (16,))
        for step in range(3):
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()

    main()
"""


def test_a_filter_by_layer_type_is_the_line_to_change(tmp_path: Path) -> None:
    found, lines = _run(tmp_path, _FILTERED)
    (finding,) = found
    assert finding.module == "Fuse"
    assert finding.details["parameters"] == ["w"]
    assert _lines(finding, "cause") == [
        lines.index("        if isinstance(module, nn.Linear):") + 1
    ]


_REPLACED = """
    import torch
    from torch import nn

    torch.manual_seed(0)

    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(torch.tensor(1.0))

        def forward(self, x):
            return x * self.scale

    def shrink(model):
        model[0] = nn.Linear(6, 2)
        model[2] = nn.Linear(2, 3)

    def calibrate(model):
        model[3].scale = nn.Parameter(torch.tensor(0.5))

    def main():
        model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3), Scale())
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        {change}
        x, y = torch.randn(16, 6), torch.randint(0, 3, (16,))
        for step in range(3):
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()

    main()
"""


def test_layers_replaced_with_new_shapes_name_the_call_after_the_optimizer(
    tmp_path: Path,
) -> None:
    found, lines = _run(tmp_path, _REPLACED.format(change="shrink(model)"))
    (finding,) = found  # one line replaced both layers: one finding
    assert _lines(finding, "cause") == [lines.index("    shrink(model)") + 1]
    assert finding.details["how"] == "replaced"


def test_a_parameter_replaced_with_one_of_its_shape_names_the_assignment(
    tmp_path: Path,
) -> None:
    found, lines = _run(tmp_path, _REPLACED.format(change="calibrate(model)"))
    (finding,) = found
    assert finding.parameter == "scale"
    assert _lines(finding, "cause") == [
        lines.index("    model[3].scale = nn.Parameter(torch.tensor(0.5))") + 1
    ]


def test_replacing_before_the_optimizer_is_built_is_silent(tmp_path: Path) -> None:
    source = _REPLACED.format(change="").replace(
        "        opt = torch.optim.SGD(model.parameters(), lr=0.1)\n",
        "        shrink(model)\n        opt = torch.optim.SGD(model.parameters(), lr=0.1)\n",
    )
    found, _ = _run(tmp_path, source)
    assert found == []


# GP116 (a module made after the optimizer) on the same scripts: silent where every learning
# module is held, or where part of one model is trained on purpose


@pytest.mark.parametrize(
    "optimizer",
    [
        (
            "opt = torch.optim.SGD([*model.parameters(), *head.parameters(), "
            "*centers.parameters()], lr=0.1)"
        ),
        (
            "opt = torch.optim.SGD([{'params': [*model.parameters(), *head.parameters()]}, "
            "{'params': centers.parameters(), 'lr': 0.5}], lr=0.1)"
        ),
    ],
)
def test_gp116_is_silent_when_the_optimizer_holds_every_learning_module(
    tmp_path: Path, optimizer: str
) -> None:
    found, _ = _run(tmp_path, _centers(optimizer), code="GP116")
    assert found == []


def test_training_part_of_one_model_on_purpose_is_silent(tmp_path: Path) -> None:
    """A head-only optimizer over a model whose backbone still requires grad: a choice."""
    source = """
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
        """
    for code in ("GP116", "GP170"):
        found, _ = _run(tmp_path, source, code=code)
        assert found == [], code
