"""How checks name lines: one cause per statement, also when it spans several lines
(issue 15, item 7)."""

from __future__ import annotations

from pathlib import Path

from gradprobe.checks._common import _locations


def test_a_statement_over_several_lines_is_one_cause(tmp_path: Path) -> None:
    script = tmp_path / "loss.py"
    script.write_text("loss = (\n    a.sum()\n    + b.mean()\n)\nother = 1\n")
    found = _locations(
        ((str(script), 2, "<module>"), "cause"),
        ((str(script), 3, "<module>"), "cause"),
        ((str(script), 3, "<module>"), "read"),
        ((str(script), 5, "<module>"), "cause"),
    )
    assert [(loc.line, loc.role) for loc in found] == [(2, "cause"), (3, "read"), (5, "cause")]
