"""The gradprobe command: --version and the demo, run as a user would."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import gradprobe
from gradprobe import demo
from gradprobe.cli import main


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gradprobe", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={"COLUMNS": "100", "PATH": "/usr/bin:/bin", "HOME": str(cwd)},
        check=False,
    )


def test_version(tmp_path: Path) -> None:
    done = _run("--version", cwd=tmp_path)
    assert done.returncode == 0
    assert done.stdout.strip() == f"gradprobe {gradprobe.__version__}"


def test_demo_explains_the_detached_features_and_writes_svg(tmp_path: Path) -> None:
    done = _run("demo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "4 of 6 parameters got no gradient" in out
    assert "features.0.weight, features.0.bias, features.2.weight, features.2.bias" in out
    assert "not in the traced graph" in out
    assert "root           loss scalar float32 ← NllLossBackward0" in out
    # record() names the line that cut the graph: the .detach() in forward
    assert "GP107 parameter_without_grad" in out
    detach_line = next(
        n
        for n, line in enumerate(Path(demo.__file__).read_text().splitlines(), start=1)
        if "features.detach()" in line
    )
    assert f"cause      demo.py:{detach_line} in forward" in out
    svg = tmp_path / "gradprobe-demo.svg"
    assert f"graph written to {svg.name}" in out
    root = ET.fromstring(svg.read_text())
    texts = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert "head.weight" in texts


def test_no_command_prints_help_and_fails(capsys: object) -> None:
    assert main([]) == 2
