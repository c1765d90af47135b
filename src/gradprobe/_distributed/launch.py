"""``gradprobe diagnose --nproc-per-node N SCRIPT``: torch's own launcher
(``python -m torch.distributed.run --standalone``) starts N workers, each running
``gradprobe diagnose SCRIPT`` and leaving its findings in a directory this process then
merges. ``--standalone`` makes torchrun pick a free port on localhost."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from gradprobe._distributed.follow import child_environment
from gradprobe._distributed.merge import Merged, merge

__all__ = ["torchrun"]


def torchrun(script: Path, args: Sequence[str], nproc_per_node: int) -> tuple[int, Merged]:
    """Run ``script`` on ``nproc_per_node`` workers; torchrun's exit status and the
    merged findings of every worker."""
    import os

    folder = Path(tempfile.mkdtemp(prefix="gradprobe-diagnose-"))
    env = dict(os.environ)
    child_environment(folder, env)
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={nproc_per_node}",
        "-m",
        "gradprobe",
        "diagnose",
        str(script),
        *args,
    ]
    try:
        status = subprocess.call(command, env=env)
        return status, merge(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
