"""Real output for docs/testing.md: an example test suite and what pytest prints for it.

``blocks()`` writes the suite to a temporary directory, runs pytest on it in a subprocess
(as a user would, with gradprobe's plugin) and returns the source and the output. The
output is made deterministic: fixed width 88, no colour, the temporary directory removed
from paths, the run time dropped, and traceback frames inside torch and gradprobe (whose
paths and line numbers depend on the installation) replaced by one line.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

WIDTH = 88
PLUGIN_MODULE = "_gradprobe_pytestplugin"

SUITE = textwrap.dedent(
    """
    import pytest
    import torch
    from torch import nn


    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Linear(8, 16)
            self.head = nn.Linear(16, 3)
            self.aux = nn.Linear(16, 3)  # left over from an experiment

        def forward(self, x):
            features = torch.relu(self.features(x))
            return self.head(features.detach())  # the bug: cuts features off


    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x  # the bug: should be 3 * x**2


    @pytest.mark.gradprobe  # record the test; a failure report gets the diagnosis
    def test_every_parameter_learns(gradprobe):
        torch.manual_seed(0)
        model = Classifier()
        loss = nn.functional.cross_entropy(model(torch.randn(4, 8)), torch.tensor([0, 2, 1, 0]))
        gradprobe.assert_grad_flows(model, loss)


    def test_cube_backward(gradprobe):
        x = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64, requires_grad=True)
        gradprobe.assert_gradcheck(Cube.apply, (x,))


    @pytest.mark.gradprobe
    def test_no_inplace_hazard(gradprobe):
        x = torch.ones(4, requires_grad=True)
        hidden = torch.sigmoid(x * 2)
        loss = hidden.sum()
        hidden.mul_(0.5)  # the bug: sigmoid's backward needs its output unchanged
        gradprobe.assert_no_inplace_conflicts(loss)


    @pytest.mark.gradprobe
    def test_two_losses_one_step():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        out = model(torch.randn(16, 4))
        out.pow(2).mean().backward(retain_graph=True)
        optimizer.step()
        out.abs().mean().backward()  # the bug: this graph saw the weights before the step


    def test_healthy_layer(gradprobe):
        layer = nn.Linear(4, 2)
        gradprobe.assert_grad_flows(layer, layer(torch.ones(3, 4)).pow(2).mean())
    """
).lstrip()


def _plugin_args() -> list[str]:
    """``-p`` the plugin unless it is installed through its entry point (not both)."""
    installed = any(
        ep.value == PLUGIN_MODULE for ep in importlib.metadata.entry_points(group="pytest11")
    )
    return [] if installed else ["-p", PLUGIN_MODULE]


def run_suite() -> str:
    """pytest's output for SUITE, deterministic."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        (root / "test_model.py").write_text(SUITE)
        env = {
            **os.environ,
            "COLUMNS": str(WIDTH),
            "OMP_NUM_THREADS": "1",
            "PYTHONHASHSEED": "0",
            "NO_COLOR": "1",
        }
        # pytest stops truncating the summary when it believes it runs on CI
        # ($CI, $BUILD_NUMBER); the page must read the same on every machine.
        for name in ("PYTEST_ADDOPTS", "FORCE_COLOR", "CI", "BUILD_NUMBER"):
            env.pop(name, None)
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                *_plugin_args(),
                "-p",
                "no:cacheprovider",
                "-q",
                "--tb=short",
                "--color=no",
                "test_model.py",
            ],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        output = done.stdout.replace(f"{root}{os.sep}", "").replace(str(root), ".")
    output = re.sub(r" in \d+(\.\d+)?s( \([^)]*\))?", "", output)
    lines = _without_library_frames(output.splitlines())
    return "\n".join(line.rstrip() for line in lines).strip() + "\n"


_FRAME = re.compile(r"^(?P<path>\S+\.py):\d+: in \S+$")


def _without_library_frames(lines: list[str]) -> list[str]:
    """Drop traceback frames outside the example (torch's and gradprobe's: their paths and
    line numbers depend on the installation), leaving one note where they were."""
    kept: list[str] = []
    skipping = False
    for line in lines:
        frame = _FRAME.match(line)
        if frame is not None:
            skipping = frame["path"] != "test_model.py"
            if skipping and kept[-1:] != [_OMITTED]:
                kept.append(_OMITTED)
            if skipping:
                continue
        elif skipping and line.startswith(" "):
            continue
        else:
            skipping = False
        kept.append(line)
    return kept


_OMITTED = "(frames inside torch and gradprobe left out of this page)"


def _line(text: str) -> int:
    (number,) = [i for i, line in enumerate(SUITE.splitlines(), start=1) if text in line]
    return number


def causes() -> str:
    """The sentence under the output, with the suite's line numbers."""
    return (
        f"Each failure points at the line to change: line {_line('features.detach()')} (the "
        "`.detach()`), the unused `aux` layer, `Cube.backward` (line "
        f"{_line('def backward')}), line {_line('hidden.mul_')} (the in-place `mul_`), and "
        f"line {_line('optimizer.step()')} (`optimizer.step()` between the forward pass and "
        "its second backward).\n"
    )


def blocks() -> dict[str, str]:
    """Marker name -> Markdown body for docs/testing.md."""
    return {
        "testing-suite": f"```python\n{SUITE}```\n",
        "testing-output": f"```text\n{run_suite()}```\n",
        "testing-causes": causes(),
    }


if __name__ == "__main__":
    sys.stdout.write(run_suite())
