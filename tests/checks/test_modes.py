"""GP111 for eval() used as a freeze: it changes nothing on layers that ignore the flag."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch
from torch import nn

from gradprobe.checks.modes import reads_training
from gradprobe.diagnose import diagnose_script
from gradprobe.findings import Finding


def run(tmp_path: Path, source: str) -> tuple[list[Finding], str]:
    script = tmp_path / "train.py"
    text = textwrap.dedent(source).lstrip("\n")
    script.write_text(text)
    result = diagnose_script(script)
    assert result.exit_code == 0
    return [f for f in result.findings if f.code == "GP111"], text


def line_of(text: str, needle: str) -> int:
    (hit,) = [n for n, line in enumerate(text.splitlines(), start=1) if needle in line]
    return hit


_LOOP = """
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            x, y = torch.randn(4, 8), torch.randint(0, 2, (4,))
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
"""


def test_eval_on_a_part_without_dropout_or_batchnorm_is_named(tmp_path: Path) -> None:
    found, text = run(
        tmp_path,
        """
        import torch
        from torch import nn

        encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16))
        model = nn.Sequential(encoder, nn.Linear(16, 2))
        model[0].eval()  # freeze the pretrained encoder
        """
        + _LOOP,
    )
    (finding,) = found
    assert [(loc.role, loc.line) for loc in finding.locations] == [
        ("cause", line_of(text, "model[0].eval()"))
    ]
    assert finding.details == {
        "module": "0",
        "parameters": ["0.0.weight", "0.0.bias", "0.2.weight", "0.2.bias"],
    }
    assert "model[0].requires_grad_(False)" in finding.message  # the user's own expression


def test_train_false_is_named_even_when_model_train_undoes_it(tmp_path: Path) -> None:
    found, text = run(
        tmp_path,
        """
        import torch
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(20, 8)
                self.encoder = nn.LSTM(8, 8, batch_first=True)  # dropout=0: mode-free
                self.head = nn.Linear(8, 2)

            def forward(self, x):
                out, _ = self.encoder(self.embed(x))
                return self.head(out[:, -1])

        model = Net()
        model.encoder.train(False)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        for epoch in range(2):
            model.train()
            x, y = torch.randint(0, 20, (4, 5)), torch.randint(0, 2, (4,))
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )
    (finding,) = found
    assert finding.locations[0].line == line_of(text, "model.encoder.train(False)")
    assert finding.module == "LSTM"
    assert finding.parameter == "encoder.weight_ih_l0"
    assert "model.encoder.train(False) at line" in finding.message


_CLEAN = {
    "validation_pass_on_the_whole_model": """
        model = nn.Sequential(nn.Sequential(nn.Linear(8, 16), nn.ReLU()), nn.Linear(16, 2))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(2):
            model.train()
            x, y = torch.randn(4, 8), torch.randint(0, 2, (4,))
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad(); loss.backward(); opt.step()
            model.eval()
            with torch.no_grad():
                model(torch.randn(2, 8))
        """,
    "frozen_batchnorm_statistics": """
        backbone = nn.Sequential(
            nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten()
        )
        model = nn.Sequential(backbone, nn.Linear(4, 2))
        model[0].eval()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(2):
            x, y = torch.randn(4, 3, 8, 8), torch.randint(0, 2, (4,))
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad(); loss.backward(); opt.step()
        """,
    "train_override_keeping_batchnorm_in_eval": """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.backbone = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Flatten())
                self.head = nn.Linear(144, 2)
            def train(self, mode=True):
                super().train(mode)
                self.backbone.eval()
                return self
            def forward(self, x):
                return self.head(self.backbone(x))
        model = Net().train()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(2):
            x, y = torch.randn(4, 3, 8, 8), torch.randint(0, 2, (4,))
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad(); loss.backward(); opt.step()
        """,
    "eval_and_requires_grad_false": """
        model = nn.Sequential(nn.Sequential(nn.Linear(8, 16), nn.ReLU()), nn.Linear(16, 2))
        model[0].eval()
        model[0].requires_grad_(False)
        """
    + _LOOP,
    "left_out_of_the_optimizer": """
        model = nn.Sequential(nn.Sequential(nn.Linear(8, 16), nn.ReLU()), nn.Linear(16, 2))
        model[0].eval()
        opt = torch.optim.SGD(model[1].parameters(), lr=0.1)
        for step in range(2):
            x, y = torch.randn(4, 8), torch.randint(0, 2, (4,))
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad(); loss.backward(); opt.step()
        """,
    "a_part_switched_back_before_training": """
        model = nn.Sequential(nn.Sequential(nn.Linear(8, 16), nn.ReLU()), nn.Linear(16, 2))
        model[0].eval()
        with torch.no_grad():
            features = model[0](torch.randn(2, 8))
        model[0].train()
        """
    + _LOOP,
    "dropout_switched_off_on_purpose": """
        model = nn.Sequential(
            nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.3)), nn.Linear(16, 2)
        )
        model[0].eval()
        """
    + _LOOP,
}


@pytest.mark.parametrize("name", sorted(_CLEAN))
def test_eval_that_does_something_or_is_undone_is_not_named(tmp_path: Path, name: str) -> None:
    source = "import torch\nfrom torch import nn\n" + textwrap.dedent(_CLEAN[name])
    found, _ = run(tmp_path, source)
    assert found == []


@pytest.mark.parametrize(
    ("module", "reads"),
    [
        (nn.Linear(2, 2), False),
        (nn.Conv2d(1, 1, 3), False),
        (nn.Embedding(3, 2), False),  # its docstring says "training"; its code does not
        (nn.LayerNorm(2), False),
        (nn.Dropout(0.0), False),
        (nn.LSTM(2, 2), False),
        (nn.Dropout(0.1), True),
        (nn.BatchNorm1d(2), True),
        (nn.LSTM(2, 2, num_layers=2, dropout=0.1), True),
        (nn.MultiheadAttention(4, 2, dropout=0.1), True),
        (nn.TransformerEncoderLayer(4, 2), True),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, nn.Module) else str(value),
)
def test_reads_training(module: nn.Module, reads: bool) -> None:
    assert reads_training(module) is reads


def test_custom_layers_are_read_from_their_source() -> None:
    class Noisy(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + torch.randn_like(x) if self.training else x

    class Plain(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * 2

    assert reads_training(Noisy()) is True
    assert reads_training(Plain()) is False


_EPOCHS = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    model = nn.Sequential(nn.Linear(6, 16), {middle}, nn.ReLU(), nn.Linear(16, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    {before}
    for epoch in range(3):
        {start}
        for batch in range(2):
            x, y = torch.randn(8, 6), torch.randint(0, 2, (8,))
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            model(torch.randn(4, 6))
"""


def _epochs(tmp_path: Path, middle: str, before: str, start: str) -> tuple[list[Finding], str]:
    script = tmp_path / "epochs.py"
    text = textwrap.dedent(_EPOCHS.format(middle=middle, before=before, start=start)).lstrip()
    script.write_text(text)
    result = diagnose_script(script)
    assert result.exit_code == 0
    return [f for f in result.findings if f.code == "GP131"], text


def test_train_called_once_before_the_loop_is_named(tmp_path: Path) -> None:
    found, text = _epochs(tmp_path, "nn.BatchNorm1d(16)", "model.train()", "pass")
    (finding,) = found
    assert [(loc.role, loc.line) for loc in finding.locations] == [
        ("cause", line_of(text, "model.train()")),
        ("read", line_of(text, "model.eval()")),
    ]
    assert finding.details == {"layers": ["BatchNorm1d"]}
    # without any train() call, the eval() is the line to look at
    found, text = _epochs(tmp_path, "nn.Dropout(0.2)", "pass", "pass")
    (finding,) = found
    assert [(loc.role, loc.line) for loc in finding.locations] == [
        ("cause", line_of(text, "model.eval()"))
    ]


def test_train_in_every_epoch_or_no_mode_layers_is_not_named(tmp_path: Path) -> None:
    assert _epochs(tmp_path, "nn.BatchNorm1d(16)", "pass", "model.train()")[0] == []
    assert _epochs(tmp_path, "nn.Identity()", "model.train()", "pass")[0] == []
    # eval mode from the start, on purpose (frozen BatchNorm statistics): not named
    assert _epochs(tmp_path, "nn.BatchNorm1d(16)", "model.eval()", "model.eval()")[0] == []


_DROPOUT_NET = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(6, 16), nn.Linear(16, 2)
            self.drop = nn.Dropout(0.5)

        def forward(self, x):
            h = F.relu(self.fc1(x))
            h = {call}
            return self.fc2(h)

    model = Net()
    model(torch.randn(4, 6)).sum().backward()
    model.eval()
    with torch.no_grad():
        model(torch.randn(4, 6))
"""


@pytest.mark.parametrize(
    ("call", "named"),
    [
        ("F.dropout(h, 0.5)", True),
        ("F.dropout(h, p=0.3)", True),
        ("F.dropout(h, 0.5, training=self.training)", False),
        ("F.dropout(h, 0.5, training=True)  # Monte Carlo dropout, on purpose", False),
        ("F.dropout(h, 0.5, self.training)", False),
        ("F.dropout(h, 0.0)", False),
        ("self.drop(h)", False),
    ],
)
def test_functional_dropout_left_on_in_eval_mode(tmp_path: Path, call: str, named: bool) -> None:
    script = tmp_path / "net.py"
    text = textwrap.dedent(_DROPOUT_NET.format(call=call)).lstrip()
    script.write_text(text)
    result = diagnose_script(script)
    found = [f for f in result.findings if f.code == "GP132"]
    if not named:
        assert found == []
        return
    (finding,) = found
    assert [(loc.role, loc.line) for loc in finding.locations] == [
        ("cause", line_of(text, "h = F.dropout"))
    ]
    assert finding.module == "Net"


def test_an_eval_loop_without_no_grad_names_the_call_and_the_eval(tmp_path: Path) -> None:
    script = tmp_path / "val.py"
    text = textwrap.dedent(
        """
        import torch
        from torch import nn

        model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.1), nn.Linear(8, 2))
        model.eval()  # relied on
        outputs = []
        for _ in range(4):
            outputs.append(model(torch.randn(3, 4)))  # builds a graph
        print(torch.cat(outputs).argmax(1))
        """
    ).lstrip("\n")
    script.write_text(text)
    found = [f for f in diagnose_script(script).findings if f.code == "GP147"]
    (finding,) = found
    assert [(loc.role, loc.line) for loc in finding.locations] == [
        ("cause", line_of(text, "builds a graph")),
        ("read", line_of(text, "relied on")),
    ]


def test_fine_tuning_in_eval_mode_is_not_an_evaluation_loop(tmp_path: Path) -> None:
    script = tmp_path / "tune.py"
    script.write_text(
        textwrap.dedent(
            """
            import torch
            from torch import nn

            model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 1))
            model.eval()  # keep the batch-norm statistics frozen
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for _ in range(4):
                opt.zero_grad()
                model(torch.randn(3, 4)).pow(2).mean().backward()
                opt.step()
            """
        ).lstrip("\n")
    )
    assert [f.code for f in diagnose_script(script).findings if f.code == "GP147"] == []
