"""Errors and warnings raised by gradprobe.

Every error a user can see derives from :class:`GradprobeError`. Subclasses also inherit
the builtin a caller would naturally catch, so ``except TypeError`` keeps working::

    GradprobeError(Exception)
    ├── GradprobeTypeError(GradprobeError, TypeError)     wrong kind of argument
    ├── GradprobeValueError(GradprobeError, ValueError)   right kind, unusable value
    └── RenderError(GradprobeError, RuntimeError)         a graph could not be rendered
        └── GraphvizNotFoundError(RenderError)            no layout engine installed

    GradprobeWarning(UserWarning)                         gradprobe degraded or skipped work

Messages follow one template: what was attempted, what was passed (``!r``), why it does
not work, and how to fix it.
"""

from __future__ import annotations

__all__ = [
    "GradprobeError",
    "GradprobeTypeError",
    "GradprobeValueError",
    "GradprobeWarning",
    "GraphvizNotFoundError",
    "RenderError",
]


class GradprobeError(Exception):
    """Root of every error gradprobe raises on purpose."""


class GradprobeTypeError(GradprobeError, TypeError):
    """An argument is not of a kind gradprobe can work with."""


class GradprobeValueError(GradprobeError, ValueError):
    """An argument has the right kind but a value gradprobe cannot use."""


class RenderError(GradprobeError, RuntimeError):
    """A graph could not be turned into a picture."""


class GraphvizNotFoundError(RenderError):
    """Neither the system ``dot`` nor the ``graphviz-pure`` engine could be found."""


class GradprobeWarning(UserWarning):
    """gradprobe had to degrade or skip part of its work; the message says what and why."""


def describe(value: object) -> str:
    """A short description of ``value`` for error messages: its type and, if small, its repr."""
    kind = type(value).__name__
    text = repr(value)
    if len(text) > 60:
        return f"a {kind}"
    return f"{text} (a {kind})"
