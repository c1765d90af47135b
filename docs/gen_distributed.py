"""docs/distributed.md: the real reports of two-rank DDP runs of ``examples/ddp/``, started
by the script's own ``mp.spawn`` and by ``gradprobe diagnose --nproc-per-node 2``."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 88


def _env() -> dict[str, str]:
    with socket.socket() as probe:  # a free port for the script's own rendezvous
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env.update(
        COLUMNS=str(WIDTH),
        NO_COLOR="1",
        OMP_NUM_THREADS="1",
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        PYTHONPATH=os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")]),
    )
    return env


def _report(stderr: str) -> str:
    """The report gradprobe printed (after the script's own output and traceback)."""
    lines = stderr.replace(str(ROOT) + os.sep, "").splitlines()
    start = next(i for i, line in enumerate(lines) if "gradprobe diagnose" in line)
    return "\n".join(line.rstrip() for line in lines[start:]) + "\n"


def spawned_report() -> str:
    """``gradprobe diagnose examples/ddp/unused_on_one_rank.py`` (the script calls
    mp.spawn): the text report."""
    done = subprocess.run(
        [sys.executable, "-m", "gradprobe", "diagnose", "examples/ddp/unused_on_one_rank.py"],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return _report(done.stderr)


def torchrun_json() -> str:
    """``gradprobe diagnose --nproc-per-node 2 --json`` on the unfreezing script: the
    JSON findings, shortened to what differs from the text report."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.json"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "gradprobe",
                "diagnose",
                "--nproc-per-node",
                "2",
                "--json",
                str(report),
                "examples/ddp/unfrozen_after_wrap.py",
            ],
            cwd=ROOT,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        data = json.loads(report.read_text())
    short = {
        "exit_code": data["exit_code"],
        "ranks": data["ranks"],
        "findings": [
            {
                "code": f["code"],
                "ranks": f["ranks"],
                "parameter": f["parameter"],
                "locations": [
                    {
                        "role": loc["role"],
                        "file": os.path.relpath(loc["file"], ROOT),
                        "line": loc["line"],
                        "text": loc["text"],
                    }
                    for loc in f["locations"]
                ],
                "details": f["details"],
            }
            for f in data["findings"]
        ],
    }
    return json.dumps(short, indent=2) + "\n"


def watched_ranks() -> str:
    """``python examples/ddp/watch_ranks.py``: rank 0 prints the merged watch report."""
    done = subprocess.run(
        [sys.executable, "examples/ddp/watch_ranks.py"],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    # torch 2.13 may abort a rank at interpreter exit, after the report was printed (see
    # tests/_ddp.torch_teardown_abort)
    teardown = "terminate called without an active exception" in done.stderr
    if done.returncode != 0 and not (teardown and done.stdout.strip()):
        raise subprocess.CalledProcessError(done.returncode, done.args, done.stdout, done.stderr)
    return "\n".join(line.rstrip() for line in done.stdout.rstrip().splitlines()) + "\n"


def blocks() -> dict[str, str]:
    return {
        "distributed-watch": f"```text\n{watched_ranks()}```\n",
        "distributed-spawn": f"```text\n{spawned_report()}```\n",
        "distributed-json": f"```json\n{torchrun_json()}```\n",
    }
