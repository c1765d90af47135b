"""docs/blame.md: one result of ``gradprobe diagnose --sarif`` on the diagnose example."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def sarif_example() -> dict[str, object]:
    """The SARIF log of examples/diagnose_training.py, run from the repository root so its
    paths are relative to ``%SRCROOT%``."""
    report = ROOT / "build" / "diagnose-example.sarif"
    report.parent.mkdir(exist_ok=True)
    env = {**os.environ, "NO_COLOR": "1", "TERM": "dumb", "OMP_NUM_THREADS": "1"}
    command = ["-m", "gradprobe", "diagnose", "--sarif", str(report)]
    subprocess.run(
        [sys.executable, *command, "examples/diagnose_training.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        check=False,
    )
    log: dict[str, object] = json.loads(report.read_text(encoding="utf-8"))
    return log


def blocks() -> dict[str, str]:
    run = sarif_example()["runs"][0]  # type: ignore[index]
    result = run["results"][0]
    rule = run["tool"]["driver"]["rules"][result["ruleIndex"]]
    excerpt = {
        "rule": {key: rule[key] for key in ("id", "name", "shortDescription", "properties")},
        "result": result,
    }
    return {"blame-sarif": f"```json\n{json.dumps(excerpt, indent=2)}\n```\n"}
