"""Errors and warnings raised by gradprobe.

Every error a user can see derives from :class:`GradprobeError`. Subclasses also inherit
the builtin a caller would naturally catch, so ``except TypeError`` keeps working::

    GradprobeError(Exception)
    ├── GradprobeTypeError(GradprobeError, TypeError)     wrong kind of argument
    ├── GradprobeValueError(GradprobeError, ValueError)   right kind, unusable value
    ├── AutogradError(GradprobeError)                     an autograd error, explained
    │   ├── BackwardWouldFail(AutogradError, RuntimeError)  check() found it before backward
    │   └── Explained<Type>(AutogradError, <Type>)          explain() re-raising torch's error
    ├── GradprobeAssertionError(AssertionError, GradprobeError)  a gradprobe.testing check failed
    ├── RecordingError(GradprobeError, RuntimeError)      record() re-entered
    ├── WatchSessionClosed(GradprobeError, RuntimeError)  a closed watch() session used
    ├── SaliencyBlindSpotError(GradprobeError, RuntimeError)  ReLUs saliency cannot reach
    ├── MatplotlibNotFoundError(GradprobeError, ImportError)  the `plot` extra is missing
    └── RenderError(GradprobeError, RuntimeError)         a graph could not be rendered
        └── GraphvizNotFoundError(RenderError)            no layout engine installed

    GradprobeWarning(UserWarning)                         gradprobe degraded or skipped work

Messages follow one template: what was attempted, what was passed (``!r``), why it does
not work, and how to fix it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gradprobe.findings import Finding

__all__ = [
    "AutogradError",
    "BackwardWouldFail",
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


class AutogradError(GradprobeError):
    """An autograd error that gradprobe explained; ``findings`` says what went wrong.

    :func:`gradprobe.explain` raises subclasses that also inherit the original exception's
    type, so ``except RuntimeError`` keeps working.
    """

    findings: tuple[Finding, ...] = ()

    @property
    def finding(self) -> Finding | None:
        """The main finding (the first), if any."""
        return self.findings[0] if self.findings else None


class BackwardWouldFail(AutogradError, RuntimeError):
    """:meth:`gradprobe.check` found that ``backward()`` through this graph would fail."""

    def __init__(self, message: str, findings: tuple[Finding, ...] = ()) -> None:
        super().__init__(message)
        self.findings = findings

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.findings))


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
