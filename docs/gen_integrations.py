"""docs/integrations.md: the real output of ``examples/lightning_nan.py``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 88


def example_output() -> str:
    env = {**os.environ, "COLUMNS": str(WIDTH), "NO_COLOR": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "examples/lightning_nan.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    text = done.stdout.replace(str(ROOT) + os.sep, "")
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def blocks() -> dict[str, str]:
    return {"lightning-example": f"```text\n{example_output()}```\n"}
