"""Checks as plug-ins, end to end: a failing built-in check costs only its own findings,
and a third-party check installed through the ``gradprobe.checks`` entry-point group runs
under ``gradprobe diagnose`` (the worked example of docs/checks.md)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gradprobe.checks import numerics
from gradprobe.diagnose import diagnose_script

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "acme_checks"

SCRIPT = """
import torch

w = torch.randn(3, requires_grad=True)
hidden = w * 2
loss = (hidden * hidden).sum()
loss.backward()
print(hidden.grad)
"""


def test_one_failing_check_leaves_every_other_finding(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(SCRIPT))
    assert [f.code for f in diagnose_script(script).findings] == ["GP106"]

    def broken(self, run):  # type: ignore[no-untyped-def]
        raise IndexError("list index out of range")

    monkeypatch.setattr(numerics.NonFiniteOrigin, "conclude", broken)
    findings = diagnose_script(script).findings
    assert [f.code for f in findings] == ["GP106", "GP199"]
    assert findings[0].cause is not None and findings[0].cause.line == 5
    assert findings[1].details["check"] == "gradprobe.numerics.non_finite_origin"
    assert "IndexError" in findings[1].message


def _install(site: Path, entry_points: str) -> None:
    """A distribution as pip installs it: the module and a dist-info with entry points."""
    shutil.copy(EXAMPLE / "acme_checks.py", site / "acme_checks.py")
    info = site / "acme_checks-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-checks\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))


def _diagnose(site: Path, tmp_path: Path, script: Path) -> tuple[list[dict], str]:  # type: ignore[type-arg]
    report = tmp_path / "report.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-m", "gradprobe", "diagnose", "--json", str(report), str(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(report.read_text())["findings"], done.stderr


def test_an_installed_plugin_check_reports_through_diagnose(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    _install(site, "[gradprobe.checks]\nzero_lr = acme_checks:ZeroLearningRate\n")
    findings, report = _diagnose(site, tmp_path, EXAMPLE / "train_zero_lr.py")
    assert [f["code"] for f in findings] == ["ACME101"]
    (cause,) = [loc for loc in findings[0]["locations"] if loc["role"] == "cause"]
    assert cause["line"] == 9 and "lr=config" in cause["text"]
    assert findings[0]["doc"].startswith("https://")
    # a plug-in's page is its URL: gradprobe explain does not know it
    assert findings[0]["doc"] in " ".join(report.split()) or "https://" in report
    assert "gradprobe explain ACME101" not in report


def test_a_plugin_that_fails_to_load_is_skipped_with_a_warning(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    _install(site, "[gradprobe.checks]\nbroken = acme_checks:NoSuchCheck\n")
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(SCRIPT))
    findings, stderr = _diagnose(site, tmp_path, script)
    assert [f["code"] for f in findings] == ["GP106"]
    assert "could not load the check 'acme_checks:NoSuchCheck'" in stderr


@pytest.mark.parametrize("lr", ["0.0", "0.1"])
def test_the_example_check_is_silent_when_the_optimizer_learns(tmp_path: Path, lr: str) -> None:
    site = tmp_path / "site"
    site.mkdir()
    _install(site, "[gradprobe.checks]\nzero_lr = acme_checks:ZeroLearningRate\n")
    script = tmp_path / "train.py"
    script.write_text((EXAMPLE / "train_zero_lr.py").read_text().replace("0.0", lr))
    findings, _ = _diagnose(site, tmp_path, script)
    assert [f["code"] for f in findings] == (["ACME101"] if lr == "0.0" else [])
