"""Output paths checked before any work is done (the command line's ``--json``,
``demo --svg``): a long training script should not run only to fail writing its report.

Imports nothing heavy: the command line checks its paths before torch is imported.

Example:
    >>> from gradprobe._paths import unwritable
    >>> unwritable("/no/such/dir/r.json")
    'the directory /no/such/dir does not exist'
    >>> unwritable("report.json") is None
    True
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["unwritable"]


def unwritable(path: str | os.PathLike[str]) -> str | None:
    """Why a file cannot be written at ``path``, or None when it can, as far as can be
    told without writing (the file is not created)."""
    target = Path(path).expanduser()
    if target.is_dir():
        return f"{str(target)!r} is a directory; give a file name inside it"
    parent = target.parent
    if not parent.exists():
        return f"the directory {parent} does not exist"
    if not parent.is_dir():
        return f"{parent} is not a directory"
    if target.exists():
        if not os.access(target, os.W_OK):
            return f"{target} exists and is not writable"
    elif not os.access(parent, os.W_OK | os.X_OK):
        return f"the directory {parent} is not writable"
    return None
