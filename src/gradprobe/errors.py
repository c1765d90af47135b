"""Errors and warnings raised by gradprobe.

Every error a user can see derives from :class:`GradprobeError`. Subclasses also inherit
the builtin a caller would naturally catch, so ``except TypeError`` keeps working::

    GradprobeError(Exception)
    ├── GradprobeTypeError(GradprobeError, TypeError)               wrong kind of argument
    ├── GradprobeValueError(GradprobeError, ValueError)             right kind, unusable value
    ├── FindingsError(GradprobeError)                               comes with .findings
    │   ├── AutogradError(FindingsError)                            an autograd error, explained
    │   │   ├── BackwardWouldFail(AutogradError, RuntimeError)      check(): backward would fail
    │   │   └── Explained<Type>(AutogradError, <Type>)              explain() re-raising
    │   ├── GradprobeAssertionError(AssertionError, FindingsError)  gradprobe.testing
    │   └── SaliencyBlindSpotError(FindingsError, RuntimeError)     ReLUs saliency misses
    ├── MissingExtraError(GradprobeError, ImportError)              an optional dependency missing
    │   ├── MatplotlibNotFoundError(MissingExtraError)              the `plot` extra
    │   ├── MissingDependencyError(MissingExtraError)               the `test` extra (strategies)
    │   └── IntegrationNotFoundError(MissingExtraError)             `lightning`, `transformers`
    ├── RecordingError(GradprobeError, RuntimeError)                record() re-entered
    ├── WatchSessionClosed(GradprobeError, RuntimeError)            a closed watch() session used
    ├── HostSyncError(GradprobeError, RuntimeError)                 a hook waited for the device
    └── RenderError(GradprobeError, RuntimeError)                   a graph could not be rendered
        └── GraphvizNotFoundError(RenderError)                      no layout engine installed

    GradprobeWarning(UserWarning)                                   degraded or skipped work

Every class is defined here (``Explained<Type>`` is made by :mod:`gradprobe._explain`); the
modules that raise them re-export them, so ``from gradprobe._record import RecordingError``
keeps working.

Messages follow one template: what was attempted, what was passed (``!r``), why it does
not work, and how to fix it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gradprobe.findings import Finding

__all__ = [
    "AutogradError",
    "BackwardWouldFail",
    "FindingsError",
    "GradprobeAssertionError",
    "GradprobeError",
    "GradprobeTypeError",
    "GradprobeValueError",
    "GradprobeWarning",
    "GraphvizNotFoundError",
    "HostSyncError",
    "IntegrationNotFoundError",
    "MatplotlibNotFoundError",
    "MissingDependencyError",
    "MissingExtraError",
    "RecordingError",
    "RenderError",
    "SaliencyBlindSpotError",
    "WatchSessionClosed",
]


class GradprobeError(Exception):
    """Root of every error gradprobe raises on purpose."""


class GradprobeTypeError(GradprobeError, TypeError):
    """An argument is not of a kind gradprobe can work with."""


class GradprobeValueError(GradprobeError, ValueError):
    """An argument has the right kind but a value gradprobe cannot use."""


class FindingsError(GradprobeError):
    """An error that comes with ``findings``: what gradprobe found, and where."""

    findings: tuple[Finding, ...] = ()

    def __init__(self, message: str, findings: Sequence[Finding] = ()) -> None:
        super().__init__(message)
        self.findings = tuple(findings)

    @property
    def finding(self) -> Finding | None:
        """The main finding (the first), if any."""
        return self.findings[0] if self.findings else None

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.findings))


class AutogradError(FindingsError):
    """An autograd error that gradprobe explained; ``findings`` says what went wrong.

    :func:`gradprobe.explain` raises subclasses that also inherit the original exception's
    type, so ``except RuntimeError`` keeps working.
    """


class BackwardWouldFail(AutogradError, RuntimeError):
    """:meth:`gradprobe.check` found that ``backward()`` through this graph would fail."""


class GradprobeAssertionError(AssertionError, FindingsError):
    """An autograd property did not hold; ``findings`` says what gradprobe found and why.

    The message is complete on its own (one line per failing item, the reason, the fix),
    so it reads the same under pytest, unittest or a plain ``python`` run.
    """

    # AssertionError comes first in the MRO, and its __init__ would not keep the findings.
    def __init__(self, message: str, findings: Sequence[Finding] = ()) -> None:
        super().__init__(message)
        self.findings = tuple(findings)


class SaliencyBlindSpotError(FindingsError, RuntimeError):
    """:func:`~gradprobe.guided_backprop` with ``on_blind_spot="raise"`` found ReLUs it cannot
    reach; ``findings`` (GP401) says where."""


class MissingExtraError(GradprobeError, ImportError):
    """An optional dependency of gradprobe is not installed; the message names the extra."""


class MatplotlibNotFoundError(MissingExtraError):
    """matplotlib, needed for gradprobe's pictures, is not installed."""


class MissingDependencyError(MissingExtraError):
    """hypothesis, needed by :mod:`gradprobe.strategies`, is not installed."""


class IntegrationNotFoundError(MissingExtraError):
    """The training framework a :mod:`gradprobe.integrations` module plugs into (Lightning,
    Transformers) is not installed; the message names the extra."""


class RecordingError(GradprobeError, RuntimeError):
    """``record()`` was used in a way it cannot support (re-entering an active or ended
    recording). Nested ``record()`` blocks are fine: each records what runs inside it."""


class WatchSessionClosed(GradprobeError, RuntimeError):
    """A closed :class:`~gradprobe.WatchSession` was used for something only an open one
    can do."""


class HostSyncError(GradprobeError, RuntimeError):
    """A gradprobe hook called a tensor method that waits for the device (a host sync)."""


class RenderError(GradprobeError, RuntimeError):
    """A graph could not be turned into a picture."""


class GraphvizNotFoundError(RenderError):
    """Neither the system ``dot`` nor the ``graphviz-pure`` engine could be found."""


class GradprobeWarning(UserWarning):
    """gradprobe had to degrade or skip part of its work; the message says what and why."""


UNPRINTABLE = "<exception str() failed>"
"""What Python's own traceback prints for an exception whose ``__str__`` fails."""


def error_text(error: BaseException, default: str = "") -> str:
    """``str(error)``, or ``default`` when the exception's ``__str__`` fails (or returns
    something else than text): the user's exception goes through gradprobe unchanged even
    when it cannot be printed, so gradprobe never calls ``str()`` on one unguarded."""
    try:
        return str(error)
    except Exception:  # noqa: BLE001  (whatever the user's __str__ raises)
        return default


def describe(value: object) -> str:
    """A short description of ``value`` for error messages: its type and, if small, its repr."""
    kind = type(value).__name__
    text = repr(value)
    if len(text) > 60:
        return f"a {kind}"
    return f"{text} (a {kind})"
