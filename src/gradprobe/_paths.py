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

__all__ = ["unwritable", "unwritable_dir"]


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


def unwritable_dir(path: str | os.PathLike[str]) -> str | None:
    """Why files cannot be written into the directory ``path`` (made with its parents if
    missing), or None when they can; nothing is created."""
    target = Path(path).expanduser()
    if target.exists():
        if not target.is_dir():
            return f"{target} is a file, not a directory"
        if not os.access(target, os.W_OK | os.X_OK):
            return f"the directory {target} is not writable"
        return None
    ancestor = target.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return f"{ancestor} is a file, so {target} cannot be made"
    if not os.access(ancestor, os.W_OK | os.X_OK):
        return f"{target} cannot be made: the directory {ancestor} is not writable"
    return None
