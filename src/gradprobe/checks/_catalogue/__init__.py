"""The catalogue of torch's autograd errors: for each message torch raises to users, the
pattern that recognises it (from :mod:`gradprobe._compat`), the finding gradprobe makes of
it and which line that finding names as the one to change.

One entry per message (or per way of reaching it). ``tests/checks/error_catalogue/<key>.py``
is a script that raises it, its lines marked ``# <- CAUSE`` (and ``ERROR``, ``CREATED``,
``SAVED``, ``REGISTERED``) for the test that runs each through ``gradprobe diagnose``;
``docs/gen_errors.py`` makes the table of ``docs/errors.md`` from the same entries.

Example:
    >>> from gradprobe.checks._catalogue import CATALOGUE
    >>> entry = next(e for e in CATALOGUE if e.key == "backward_twice")
    >>> entry.code, entry.matches("Trying to backward through the graph a second time (or ...")
    ('GP103', True)
"""

from __future__ import annotations

from gradprobe.checks._catalogue.dedicated import DEDICATED
from gradprobe.checks._catalogue.entry import FAMILIES, Entry
from gradprobe.checks._catalogue.warned import WARNED
from gradprobe.checks._catalogue.worded import WORDED

__all__ = ["CATALOGUE", "FAMILIES", "Entry", "warned_entry", "worded_entry"]

CATALOGUE: tuple[Entry, ...] = (*DEDICATED, *WORDED, *WARNED)


def worded_entry(text: str) -> Entry | None:
    """The entry explained in words (GP168) whose message ``text`` is, or None."""
    for entry in WORDED:
        if entry.matches(text):
            return entry
    return None


def warned_entry(text: str) -> Entry | None:
    """The warning entry (GP169) whose message ``text`` is, or None."""
    for entry in WARNED:
        if entry.matches(text):
            return entry
    return None
