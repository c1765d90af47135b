"""Run a script under ``gradprobe diagnose`` for the check tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

from gradprobe.diagnose import diagnose_script
from gradprobe.findings import Finding


def diagnose(tmp_path: Path, source: str, status: int = 0) -> tuple[list[Finding], str]:
    script = tmp_path / "train.py"
    text = textwrap.dedent(source).lstrip("\n")
    script.write_text(text)
    result = diagnose_script(script)
    assert result.exit_code == status
    return list(result.findings), text


def line_of(text: str, needle: str) -> int:
    (hit,) = [n for n, line in enumerate(text.splitlines(), start=1) if needle in line]
    return hit


def roles(finding: Finding) -> list[tuple[str, int | None]]:
    return [(loc.role, loc.line) for loc in finding.locations]
