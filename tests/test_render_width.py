"""Terminal output fits the width without cutting a number or a word: findings, watch
reports, leaf reports and hook inventories at 80 and 120 columns (TERM=dumb), and the
stacked layout when a table cannot fit."""

from __future__ import annotations

import inspect
import math
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from torch import nn

import gradprobe
from gradprobe.hooks import inventory
from gradprobe.render._fit import Column, FittedTable
from gradprobe.render.text import to_text

_SRC = str(Path(gradprobe.__file__).resolve().parent.parent)
WIDTHS = [80, 120]


@pytest.fixture(params=WIDTHS, ids=[f"{w}-columns" for w in WIDTHS])
def width(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setenv("COLUMNS", str(request.param))
    monkeypatch.setenv("TERM", "dumb")
    return int(request.param)


def _fits(text: str, width: int) -> None:
    assert "…" not in text
    too_wide = [line for line in text.splitlines() if len(line) > width]
    assert not too_wide


def _g(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:.3g}"


def _exploding_mlp() -> gradprobe.WatchSession:
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(4, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1))
    with torch.no_grad():
        for p in mlp.parameters():
            p.mul_(40)
    opt = torch.optim.SGD(mlp.parameters(), lr=0.1)
    with gradprobe.watch(mlp, optimizer=opt, sample_every=1) as session:
        for _ in range(2):
            opt.zero_grad()
            mlp(torch.randn(8, 4)).pow(2).sum().backward()
            opt.step()
    return session


def test_a_watch_report_of_an_exploding_mlp_keeps_every_number_whole(width: int) -> None:
    session = _exploding_mlp()
    assert "GP203" in {f.code for f in session.findings()}
    text = str(session)
    _fits(text, width)
    last = session.history[-1]
    tokens = set(text.split())
    big = [s.norm for s in last.parameter_grads.values() if s.norm is not None]
    big += [a.stats.max for a in last.activations if a.stats.max is not None]
    assert any(abs(v) >= 1e5 for v in big)  # exponents to lose
    for value in big:
        assert _g(value) in tokens
    for finding in session.findings():
        assert finding.title in " ".join(text.split())  # wrapped, never cut mid-word


def test_a_leaf_report_of_a_cnn_keeps_its_grad_column(width: int) -> None:
    class CNN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1, self.bn1 = nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8)
            self.conv2, self.bn2 = nn.Conv2d(8, 16, 3), nn.BatchNorm2d(16)
            self.classifier = nn.Linear(16, 10)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = self.bn1(self.conv1(x)).relu()
            x = self.bn2(self.conv2(x)).relu().detach()
            return self.classifier(x.mean((2, 3)))  # type: ignore[no-any-return]

    model = CNN()
    x = torch.randn(2, 3, 12, 12)
    loss = model(x).sum()
    graph = gradprobe.trace(loss, model=model, names={"x": x})
    loss.backward()
    report = gradprobe.leaf_report(graph, model, {"x": x})
    text = str(report)
    _fits(text, width)
    lines = text.splitlines()
    for name, parameter in model.named_parameters():
        (row,) = [line.split() for line in lines if line.split()[:1] == [name]]
        assert row[-1] == ("set" if parameter.grad is not None else "None")
    assert len([p for p in model.parameters()]) == 10


def _hook(*args: object, **kwargs: object) -> None:
    return None


def test_an_inventory_prints_as_wide_as_the_terminal(width: int) -> None:
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.Linear(8, 2))
    model[0].register_forward_hook(_hook)
    model[1].register_full_backward_hook(_hook)
    model[2].register_forward_pre_hook(_hook, with_kwargs=True)
    text = str(inventory(model))
    _fits(text, width)
    assert re.search(
        r"^2 \(Linear\)\s+forward_pre\s+_hook\s+test_render_width\.py:\d+"
        r"\s+with_kwargs$",
        text,
        re.MULTILINE,
    )
    # as wide as its content, not a fixed 110 columns
    assert max(len(line) for line in text.splitlines()) < 80


def test_a_finding_title_too_long_for_the_border_moves_into_the_panel(width: int) -> None:
    with gradprobe.record() as rec:
        x = torch.ones(3, requires_grad=True)
        y = x.sigmoid()
        _ = y.data.zero_()
        y.sum().backward()
    (finding,) = rec.findings
    text = to_text(rec)
    _fits(text, width)
    header = f"{finding.code} {finding.kind} — {finding.title}"
    assert len(header) + 6 > 80  # too long for a border of 80 columns
    first = text.splitlines()[0]
    if len(header) + 6 <= width:
        assert header in first
    else:
        assert f"{finding.code} {finding.kind} " in first and finding.title not in first
        assert finding.title in " ".join(text.split())


@pytest.mark.parametrize(
    ("narrow", "stacked"),
    [
        (
            30,
            [
                "layer1.0.conv1.weight 64×3×7×7",
                "  grad norm 1.32e+05",
                "  max |grad| -6.53e+33",
                "fc.bias 10",
                "  grad norm nan",
                "  max |grad| 0.00123",
            ],
        ),
        (
            44,
            [
                "layer1.0.conv1.weight 64×3×7×7",
                "  grad norm 1.32e+05   max |grad| -6.53e+33",
                "fc.bias 10",
                "  grad norm nan   max |grad| 0.00123",
            ],
        ),
    ],
)
def test_a_table_too_wide_for_the_terminal_is_stacked(narrow: int, stacked: list[str]) -> None:
    table = FittedTable(
        "gradients",
        [
            Column("parameter"),
            Column("shape"),
            Column("grad norm", justify="right"),
            Column("max |grad|", justify="right"),
        ],
        [
            ["layer1.0.conv1.weight", "64×3×7×7", "1.32e+05", "-6.53e+33"],
            ["fc.bias", "10", "nan", "0.00123"],
        ],
        keys=2,
    )
    text = to_text(table, width=narrow)
    _fits(text, narrow)
    assert text.splitlines() == ["gradients", *stacked]
    wide = to_text(table, width=80)
    assert "layer1.0.conv1.weight  64×3×7×7   1.32e+05   -6.53e+33" in wide


def test_diagnose_in_a_pipe_at_80_columns_cuts_nothing(tmp_path: Path) -> None:
    script = tmp_path / "rnn_state_carried_over_from_the_previous_iteration.py"
    script.write_text(
        textwrap.dedent(
            """\
            import torch
            w = torch.ones(3, requires_grad=True)
            h = torch.zeros(3)
            for step in range(2):
                h = torch.tanh(h * w + 1.0)
                (h.sum() * float("inf") * 0.0).backward()
            """
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "gradprobe", "diagnose", script.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"COLUMNS": "80", "TERM": "dumb", "PATH": "/usr/bin:/bin", "PYTHONPATH": _SRC},
        check=False,
    )
    report = done.stderr[done.stderr.index("gradprobe diagnose") :]
    assert "GP103" in report
    _fits(report, 80)
    assert f"gradprobe diagnose {script.name}" in report


# The shared real-bug cases the issue names, beside this checkout as ../shared.
SHARED = Path(__file__).resolve().parent.parent.parent / "shared"


@pytest.mark.parametrize(
    ("case", "code"),
    [
        ("cases-2/12_rnn_hidden_state_not_detached.py", "GP103"),
        ("cases/23_ddp_unused_parameters.py", "GP163"),
        ("cases/27_masked_logits_zero_times_neginf_nan.py", "GP201"),
    ],
    ids=["cases-2-12", "cases-23", "cases-27"],
)
def test_diagnose_of_a_shared_case_at_80_columns_cuts_nothing(
    case: str, code: str, tmp_path: Path
) -> None:
    script = SHARED / case
    if not script.is_file():
        pytest.skip("../shared is not beside this checkout")
    done = subprocess.run(
        [sys.executable, "-m", "gradprobe", "diagnose", str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={"COLUMNS": "80", "TERM": "dumb", "PATH": "/usr/bin:/bin", "PYTHONPATH": _SRC},
        check=False,
    )
    # what comes before the heading is the script's own traceback, not gradprobe's output
    report = done.stderr[done.stderr.index(f"gradprobe diagnose {script.name}") :]
    assert f"{code} " in report
    _fits(report, 80)


# the same run as _exploding_mlp, as a script whose report goes to a pipe
_EXPLODING_REPORT = (
    "import torch\nfrom torch import nn\nimport gradprobe\n\n"
    + inspect.getsource(_exploding_mlp)
    + "\n_exploding_mlp().report()\n"
)


def test_session_report_of_an_exploding_mlp_in_a_pipe_at_80_columns_cuts_nothing(
    tmp_path: Path,
) -> None:
    # session.report() is rich's rendering, not str(session): a Console of its own on stdout
    done = subprocess.run(
        [sys.executable, "-c", _EXPLODING_REPORT],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"COLUMNS": "80", "TERM": "dumb", "PATH": "/usr/bin:/bin", "PYTHONPATH": _SRC},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "GP203 exploding_gradient" in done.stdout
    assert "parameter gradients at step 1" in done.stdout
    _fits(done.stdout, 80)
