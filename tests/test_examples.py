"""Every script in examples/ runs and prints the lines it promises.

An example declares its key output lines in comments of the form ``# expect: TEXT``; each
TEXT must appear in a line of what the script prints (stdout and stderr together).
Examples run in a subprocess, as a user would run them, with one torch thread.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
_EXPECT = re.compile(r"^#\s*expect:\s?(?P<text>.+?)\s*$", re.MULTILINE)
SCRIPTS = sorted(EXAMPLES.glob("*.py")) if EXAMPLES.is_dir() else []


def expected_lines(script: Path) -> list[str]:
    return [m["text"] for m in _EXPECT.finditer(script.read_text())]


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_example_prints_what_it_promises(script: Path, tmp_path: Path) -> None:
    expected = expected_lines(script)
    assert expected, f"{script.name} declares no '# expect: ...' lines"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0", "COLUMNS": "100"}
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    missing = [line for line in expected if line not in output]
    assert not missing, f"{script.name} did not print {missing!r}; it printed:\n{output}"


def test_expect_lines_are_found() -> None:
    text = "import x\n# expect: first line\n#expect:second\nprint()\n"
    path = Path(__file__)  # any file: only the parser is under test
    assert _EXPECT.findall(text) == ["first line", "second"]
    assert isinstance(expected_lines(path), list)
