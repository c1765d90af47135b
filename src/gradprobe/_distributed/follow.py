"""Where a diagnosed script's processes leave their findings, and who merges them.

Three situations, told apart by the environment:

- ``gradprobe diagnose train.py`` (nothing set): a fresh directory is made, named in
  ``GRADPROBE_DIAGNOSE_DIR`` and with ``boot/`` first on ``PYTHONPATH`` while the script
  runs, so the workers it starts record too; this process merges when the script is done.
- a worker started for ``gradprobe diagnose --nproc-per-node N`` (the variable is set):
  it leaves its findings there and stays quiet; the command that launched torchrun merges.
- ``torchrun ... -m gradprobe diagnose train.py`` (torchrun's ``RANK``/``WORLD_SIZE``
  set, the variable not): the workers on this node share a directory named after their
  common parent (the torchrun agent) and its port. Each leaves its findings and a
  ``done-<rank>`` mark; the last to finish, or the first whose script failed (the others
  may then be stopped by torchrun), merges what is there and prints the one report.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import MutableMapping, Sequence
from pathlib import Path

from gradprobe import _ranklog
from gradprobe._distributed.merge import Merged, merge
from gradprobe._distributed.worker import leave_findings
from gradprobe.findings import Finding

__all__ = ["BOOT", "Follow", "child_environment"]

BOOT = Path(__file__).resolve().parent / "boot"
"""The directory whose ``sitecustomize`` makes the script's workers record."""


def child_environment(folder: Path, env: MutableMapping[str, str]) -> None:
    """Set ``env`` so that processes started with it record into ``folder``."""
    env[_ranklog.ENV] = str(folder)
    path = env.get("PYTHONPATH", "")
    parts = [p for p in path.split(os.pathsep) if p and p != str(BOOT)]
    env["PYTHONPATH"] = os.pathsep.join([str(BOOT), *parts])


def _torchrun_rank() -> tuple[int, int] | None:
    rank, world = os.environ.get("RANK"), os.environ.get("LOCAL_WORLD_SIZE")
    world = world or os.environ.get("WORLD_SIZE")
    if rank is None or world is None or "TORCHELASTIC_RUN_ID" not in os.environ:
        return None
    try:
        return int(rank), int(world)
    except ValueError:
        return None


class Follow:
    """The processes of one diagnosed script: set up before it runs, merged after."""

    def __init__(self) -> None:
        self._saved = {name: os.environ.get(name) for name in (_ranklog.ENV, "PYTHONPATH")}
        outer = os.environ.get(_ranklog.ENV)
        self.torchrun = _torchrun_rank() if outer is None else None
        self.worker = outer is not None
        self._own_dir = False
        if outer is not None:
            self.folder = Path(outer)
        elif self.torchrun is not None:
            key = "-".join(
                os.environ.get(name, "")
                for name in ("MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RESTART_COUNT")
            )
            self.folder = Path(tempfile.gettempdir()) / f"gradprobe-torchrun-{os.getppid()}-{key}"
            self.folder.mkdir(exist_ok=True)
        else:
            self.folder = Path(tempfile.mkdtemp(prefix="gradprobe-diagnose-"))
            self._own_dir = True
        child_environment(self.folder, os.environ)

    def finish(self, own: Sequence[Finding], error: BaseException | None) -> Merged | None:
        """Leave this process's findings; the merged report if this process is the one
        that merges, else None. Restores the environment."""
        self._restore()
        failed = error is not None and not (
            isinstance(error, SystemExit) and error.code in (0, None)
        )
        if self.worker:
            leave_findings(own, error if failed else None)
            return None
        if self.torchrun is None:
            try:
                return merge(self.folder, own, os.getpid())
            finally:
                if self._own_dir:
                    shutil.rmtree(self.folder, ignore_errors=True)
        rank, world = self.torchrun
        os.environ[_ranklog.ENV] = str(self.folder)
        try:
            leave_findings(own, error if failed else None)
        finally:
            del os.environ[_ranklog.ENV]
        try:
            (self.folder / f"done-{rank}").touch()
            done = len(list(self.folder.glob("done-*")))
            if done < world and not failed:
                return None
            os.close(os.open(self.folder / "merged", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except OSError:
            return None  # another rank merges (or already has)
        try:
            return merge(self.folder)
        finally:  # a rank still running notes nothing more (its files are gone)
            shutil.rmtree(self.folder, ignore_errors=True)

    def cleanup(self) -> None:
        """Undo the set-up without merging (the script could not be started)."""
        self._restore()
        if self._own_dir:
            shutil.rmtree(self.folder, ignore_errors=True)

    def _restore(self) -> None:
        for name, value in self._saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
