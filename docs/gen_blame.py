"""docs/blame.md: the real output of the blame examples (``record()`` and ``diagnose``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WIDTH = "88"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": WIDTH, "NO_COLOR": "1", "TERM": "dumb", "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )


def _relative(text: str) -> str:
    return text.replace(str(ROOT) + os.sep, "")


def record_example() -> str:
    done = _run("examples/blame_inplace.py")
    return _relative(done.stdout)


def diagnose_example() -> tuple[str, dict[str, object]]:
    report = ROOT / "build" / "diagnose-example.json"
    report.parent.mkdir(exist_ok=True)
    done = _run(
        "-m", "gradprobe", "diagnose", "--json", str(report), "examples/diagnose_training.py"
    )
    lines = done.stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if "gradprobe diagnose" in line)
    data = json.loads(_relative(report.read_text()))
    return _relative("\n".join(line.rstrip() for line in lines[start:]) + "\n"), data


def protocol_example() -> str:
    done = _run("-m", "gradprobe", "diagnose", "examples/step_protocol.py")
    lines = done.stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if "gradprobe diagnose" in line)
    return _relative("\n".join(line.rstrip() for line in lines[start:]) + "\n")


def blocks() -> dict[str, str]:
    text, data = diagnose_example()
    first = data["findings"][0]  # type: ignore[index]
    excerpt = {**data, "findings": [first, "..."]}
    return {
        "blame-record": f"```text\n{record_example()}```\n",
        "blame-diagnose": f"```text\n{text}```\n",
        "blame-json": f"```json\n{json.dumps(excerpt, indent=2)}\n```\n",
        "blame-protocol": f"```text\n{protocol_example()}```\n",
    }
