"""The texts of the codes of the training-step invariants (GP170-GP189; see docs/invariants.md),
kept apart so ``_codes.py`` stays one screenful per family. Plain tuples ``(code, kind, title,
explanation, hint)``: ``_codes.py`` makes them :class:`~gradprobe._codes.Code` entries."""

from __future__ import annotations

__all__ = ["STEP_CODES"]

Entry = tuple[str, str, str, str, str]


def _entry(code: str, kind: str, title: str, explanation: str, hint: str) -> Entry:
    return (code, kind, title, explanation, hint)


# one entry per invariant check, in code order
STEP_CODES: tuple[Entry, ...] = ()
