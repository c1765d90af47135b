"""What one process of a distributed run saw, appended line by line to a shared directory.

``gradprobe diagnose`` sets :data:`ENV` to a directory before it runs a script; every
process that records there (the script itself, the workers ``mp.spawn`` or torchrun start)
appends JSON lines to ``DIR/<pid>.jsonl``: its rank, what the distributed checks noted
(the model each rank handed to DistributedDataParallel, the parameters each forward left
unused, where sub-modules were called) and, at the end, its findings. Each line is
written and flushed at once, so a process that dies half-way still leaves what it saw.
Outside ``gradprobe diagnose`` (no :data:`ENV`), :func:`note` does nothing.

Example:
    >>> import os, tempfile
    >>> from gradprobe import _ranklog
    >>> folder = tempfile.mkdtemp()
    >>> os.environ[_ranklog.ENV] = folder
    >>> _ranklog.note("rank", rank=1, world=2)
    >>> [entry["rank"] for entry in _ranklog.read(folder)[os.getpid()]]
    [1]
    >>> del os.environ[_ranklog.ENV]
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

__all__ = ["ENV", "active", "note", "read"]

ENV = "GRADPROBE_DIAGNOSE_DIR"
"""The environment variable that names the directory of a diagnosed run's processes."""

_lock = threading.Lock()


def active() -> Path | None:
    """The directory this process notes into, or None outside ``gradprobe diagnose``."""
    folder = os.environ.get(ENV)
    return Path(folder) if folder else None


def note(kind: str, **data: Any) -> None:
    """Append ``{"kind": kind, **data}`` (JSON-ready values) to this process's file; never
    raises (a full disk loses the note, not the user's run)."""
    folder = active()
    if folder is None:
        return
    line = json.dumps({"kind": kind, **data}, default=str)
    try:
        with _lock, (folder / f"{os.getpid()}.jsonl").open("a", encoding="utf-8") as out:
            out.write(line + "\n")
    except OSError:
        pass


def read(folder: str | os.PathLike[str]) -> dict[int, list[dict[str, Any]]]:
    """Every process's notes in ``folder``: pid -> entries in the order written. A line cut
    short by a process that died while writing it is skipped."""
    found: dict[int, list[dict[str, Any]]] = {}
    for path in sorted(Path(folder).glob("*.jsonl")):
        try:
            pid = int(path.stem)
            text = path.read_text(encoding="utf-8")
        except (ValueError, OSError):
            continue
        entries = []
        for line in text.splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict):
                entries.append(entry)
        found[pid] = entries
    return found
