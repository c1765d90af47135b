"""Which line of the user's code is running: the first frame outside torch and gradprobe.

Every analysis that names a line (the recorder, hook probes, watch, the pytest plugin)
asks here, so "the user's line" means the same thing everywhere. Frames are skipped by
the directory of their file: torch's package, gradprobe's own, and a few standard-library
modules that only forward calls (``contextlib``, ``functools``, ``runpy``...).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import linecache
import os
import runpy
import sys
import threading
from pathlib import Path
from types import FrameType, TracebackType

import torch

from gradprobe.findings import Location, LocationRole

__all__ = [
    "cell_name",
    "is_gradprobe_file",
    "is_user_file",
    "line_location",
    "location_of",
    "shown_file",
    "traceback_location",
    "user_frame",
    "user_location",
]


def _dirs() -> tuple[str, ...]:
    return tuple(
        str(Path(module.__file__).resolve().parent) + os.sep
        for module in (torch, sys.modules["gradprobe"])
        if module.__file__
    )


_SKIP_DIRS = _dirs()
_SKIP_FILES = frozenset(
    os.path.realpath(f)
    for f in (
        contextlib.__file__,
        copy.__file__,
        functools.__file__,
        runpy.__file__,
        threading.__file__,
    )
    if f
)
# gradprobe's demo plays the user's script: its lines are the ones to show.
_DEMO = str(Path(__file__).resolve().with_name("demo.py"))
_verdicts: dict[str, bool] = {}  # co_filename -> is the user's


def is_user_file(filename: str) -> bool:
    """True for a file that is neither torch's nor gradprobe's nor a forwarding stdlib module."""
    verdict = _verdicts.get(filename)
    if verdict is None:
        if not filename or filename.startswith("<frozen"):
            verdict = False
        elif filename.startswith("<"):  # <stdin>, <string>, exec'd code: the user's
            verdict = True
        else:
            real = os.path.realpath(filename)
            verdict = real == _DEMO or (not real.startswith(_SKIP_DIRS) and real not in _SKIP_FILES)
        _verdicts[filename] = verdict
    return verdict


_OWN_DIR = str(Path(__file__).resolve().parent) + os.sep


def is_gradprobe_file(filename: str) -> bool:
    """True for a file of gradprobe's own package (not its demo, tests or examples)."""
    path = str(Path(filename).resolve())
    return path.startswith(_OWN_DIR) and not is_user_file(path)


def user_frame(depth: int = 1) -> FrameType | None:
    """The innermost frame outside torch and gradprobe, starting ``depth`` frames up."""
    try:
        frame: FrameType | None = sys._getframe(depth)
    except ValueError:
        return None
    while frame is not None and not is_user_file(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


_resolved: dict[str, str] = {}  # co_filename -> the path shown


def cell_name(filename: str) -> str | None:
    """``In [3]`` when ``filename`` is the file IPython compiled notebook cell 3 from
    (ipykernel writes cells as ``/tmp/ipykernel_<pid>/<hash>.py``), else None.

    Asked each time rather than cached: a cell run again, or the same code in a later
    cell, keeps its file name and takes the new execution count.
    """
    ipython = sys.modules.get("IPython")
    if ipython is None:  # never imported: not a notebook or an IPython shell
        return None
    get_ipython = getattr(ipython, "get_ipython", None)
    shell = get_ipython() if callable(get_ipython) else None
    # CachingCompiler._filename_map (IPython >= 7): compiled file name -> execution count;
    # IPython's own tracebacks name cells ("Cell In[3], line 2") from the same table.
    table = getattr(getattr(shell, "compile", None), "_filename_map", None)
    number = table.get(filename) if isinstance(table, dict) else None
    return f"In [{number}]" if isinstance(number, int) else None


def shown_file(filename: str) -> str:
    """The ``file`` of a :class:`Location`: a notebook cell's name, a pseudo-file as it is
    (``<stdin>``), or the resolved path."""
    cell = cell_name(filename)
    if cell is not None:
        return cell
    path = _resolved.get(filename)
    if path is None:
        path = filename if filename.startswith("<") else str(Path(filename).resolve())
        _resolved[filename] = path
    return path


def line_location(line: tuple[str, int, str] | None, role: LocationRole) -> Location | None:
    """A :class:`Location` for a recorded ``(co_filename, line, function)``, or None."""
    if line is None:
        return None
    filename, number, function = line
    text = linecache.getline(filename, number).strip() or None
    return Location(file=shown_file(filename), line=number, role=role, function=function, text=text)


def location_of(frame: FrameType, role: LocationRole, line: int | None = None) -> Location:
    """A :class:`Location` for ``frame`` (at ``line``, default its current line)."""
    code = frame.f_code
    number = frame.f_lineno if line is None else line
    text = linecache.getline(code.co_filename, number).strip() or None
    return Location(
        file=shown_file(code.co_filename), line=number, role=role, function=code.co_name, text=text
    )


def user_location(role: LocationRole, depth: int = 2) -> Location | None:
    """Where the user's code is now, as a :class:`Location` with ``role``; None if the call
    did not come from user code at all."""
    frame = user_frame(depth)
    return None if frame is None else location_of(frame, role)


def traceback_location(tb: TracebackType | None, role: LocationRole = "error") -> Location | None:
    """The innermost user frame of a traceback (where the user's code raised)."""
    found: Location | None = None
    while tb is not None:
        if is_user_file(tb.tb_frame.f_code.co_filename):
            found = location_of(tb.tb_frame, role, tb.tb_lineno)
        tb = tb.tb_next
    return found
