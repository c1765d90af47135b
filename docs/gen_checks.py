"""docs/checks.md: the built-in checks as registered, and the worked plug-in example with
the real output of ``gradprobe diagnose`` once it is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "acme_checks"
WIDTH = "88"


def registered_table() -> str:
    from gradprobe.checks import registered

    rows = ["| check | codes | events |", "|---|---|---|"]
    for cls in registered():
        if not cls.__module__.startswith("gradprobe."):
            continue
        codes = ", ".join(cls.codes)
        events = ", ".join(f"`{event}`" for event in cls.subscriptions())
        rows.append(f"| `{cls.name}` | {codes} | {events} |")
    return "\n".join(rows) + "\n"


def plugin_output() -> str:
    """``gradprobe diagnose`` on the example script, with the example check installed the
    way pip installs a distribution (module + dist-info with the entry point)."""
    with tempfile.TemporaryDirectory() as site:
        shutil.copy(EXAMPLE / "acme_checks.py", Path(site) / "acme_checks.py")
        info = Path(site) / "acme_checks-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-checks\nVersion: 0.1\n")
        (info / "entry_points.txt").write_text(
            "[gradprobe.checks]\nzero_lr = acme_checks:ZeroLearningRate\n"
        )
        env = {
            **os.environ,
            "COLUMNS": WIDTH,
            "NO_COLOR": "1",
            "TERM": "dumb",
            "OMP_NUM_THREADS": "1",
            "PYTHONPATH": os.pathsep.join([site, *sys.path]),
        }
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "gradprobe",
                "diagnose",
                "examples/acme_checks/train_zero_lr.py",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    lines = done.stderr.replace(str(ROOT) + os.sep, "").splitlines()
    start = next(i for i, line in enumerate(lines) if "gradprobe diagnose" in line)
    return "\n".join(line.rstrip() for line in lines[start:]) + "\n"


def blocks() -> dict[str, str]:
    source = (EXAMPLE / "acme_checks.py").read_text()
    return {
        "checks-registered": registered_table(),
        "checks-example": f"```python\n{source}```\n",
        "checks-output": f"```text\n{plugin_output()}```\n",
    }
