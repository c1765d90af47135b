"""What a check is: the events it can subscribe to and the registry that holds the checks.

A check is a class. It declares the finding codes it can report and subscribes to events
by implementing the matching methods (pluggy's idea of hook specifications, kept tiny: a
method's name is its subscription). Each recording makes one instance of every registered
check, so a check keeps its own state on ``self``; the instance is dropped when the
recording ends.

============================  =================================================================
method                        called
============================  =================================================================
``start(run)``                when the recording starts: install what the check needs (patches,
                              hooks); everything must be undone by ``stop``
``stop()``                    when the recorded block ends, also when it raised; idempotent
``on_op(call)``               after a torch call whose function is in the check's ``ops``
``on_backward(call)``         before each ``backward()`` / ``autograd.grad`` runs
``on_backward_error(call)``   when that call raised (the graph is still alive)
``on_step(step)``             after each ``optimizer.step()``
``on_namespace(run, ns)``     with the globals of a finished script (``gradprobe diagnose``)
``conclude(run)``             at the end of the run: what needs the whole run
``on_error(run, found)``      the recorded code raised ``run.error``; ``found`` is what the
                              other checks concluded, to leave explained errors alone
============================  =================================================================

Every method that returns findings returns an iterable of :class:`~gradprobe.Finding`
(``None`` is taken as none). The runner isolates checks from each other: a check that raises
is reported once as GP199 naming it, and every other check's findings are kept.

Third-party checks register through the ``gradprobe.checks`` entry-point group (see
``docs/checks.md``) or by calling :func:`register` before the recording starts.
"""

from __future__ import annotations

import re
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from gradprobe._source import line_location as location
from gradprobe.errors import GradprobeTypeError, GradprobeValueError, GradprobeWarning, describe
from gradprobe.findings import CODES, Code, Finding, register_code

if TYPE_CHECKING:
    import torch

__all__ = [
    "EVENTS",
    "BackwardCall",
    "Check",
    "OpCall",
    "Run",
    "StepCall",
    "check_name",
    "location",
    "register",
    "registered",
]

ENTRY_POINT_GROUP = "gradprobe.checks"

EVENTS: tuple[str, ...] = (
    "start",
    "stop",
    "on_op",
    "on_backward",
    "on_backward_error",
    "on_step",
    "on_namespace",
    "conclude",
    "on_error",
)
"""The methods a check may implement; implementing one subscribes the check to it."""


@dataclass
class Run:
    """What a check may look at: the recorder's events and the objects it saw.

    ``events`` is the recorder's record of the run (plain data: lines, versions, cuts; see
    :mod:`gradprobe._recorder`). ``modules`` and ``optimizers`` are the modules called and
    the optimizers stepped while recording that are still alive; ``inside`` maps a module
    called inside another's forward (by id) to that outer module. ``error`` is the
    exception that escaped the recorded code, if any.
    """

    events: Any
    modules: Sequence[torch.nn.Module] = ()
    optimizers: Sequence[Any] = ()
    inside: Mapping[int, Any] = field(default_factory=dict)
    error: BaseException | None = None
    taint: Callable[[Any], frozenset[int]] = lambda _tensor: frozenset()
    final: bool = True  # False for a snapshot taken while the recording still runs
    # set when concluding because this module or optimizer is about to be freed
    dying: Any = None


@dataclass
class BackwardCall:
    """One ``backward()`` or ``autograd.grad`` call: the recorder's record of it and its
    root tensors (alive only during the call)."""

    run: Run
    event: Any  # gradprobe._recorder.Backward
    roots: Sequence[torch.Tensor]
    inputs: Sequence[torch.Tensor] = ()  # what it was asked to differentiate (inputs=)

    @property
    def error(self) -> BaseException | None:
        """What the call raised (only set for ``on_backward_error``)."""
        error: BaseException | None = self.event.error
        return error


@dataclass
class OpCall:
    """A torch call a check asked for (``ops``), seen after it returned."""

    run: Run
    func: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]
    result: Any
    line: tuple[str, int, str] | None  # (file, line, function) of the user's call


@dataclass
class StepCall:
    """An ``optimizer.step()`` that just ran: the user's line that called it, and the line
    that built the optimizer (where its learning rate and parameters were chosen), as
    ``(file, line, function)``; :func:`location` turns one into a finding's location."""

    run: Run
    optimizer: Any
    line: tuple[str, int, str] | None
    created: tuple[str, int, str] | None = None


class Check:
    """Base class of every check; subclass it, set ``codes`` and implement events.

    Example:
        >>> from gradprobe.checks import Check
        >>> class LossIsScalar(Check):
        ...     codes = ("GP105",)
        ...     def on_backward(self, call):
        ...         return ()
        >>> LossIsScalar.subscriptions()
        ('on_backward',)
    """

    codes: ClassVar[tuple[str, ...]] = ()
    """The finding codes this check reports (registered in :data:`gradprobe.CODES`)."""
    new_codes: ClassVar[tuple[Code, ...]] = ()
    """Codes a third-party check brings; registered with the check."""
    ops: ClassVar[frozenset[Callable[..., Any]]] = frozenset()
    """The torch functions whose calls ``on_op`` receives."""
    reads_modules: ClassVar[bool] = False
    """Whether :meth:`conclude` reads ``run.modules`` or ``run.optimizers``. Such a check
    also concludes just before one of them is freed (a model local to ``main()``), so it
    sees them whole; its findings from then are kept."""
    name: ClassVar[str] = ""
    """How GP199 and ``gradprobe.checks.registered()`` name the check; defaults to
    ``module:ClassName``."""

    @classmethod
    def subscriptions(cls) -> tuple[str, ...]:
        """The events this check implements, in :data:`EVENTS` order."""
        return tuple(event for event in EVENTS if getattr(cls, event) is not getattr(Check, event))

    def start(self, run: Run) -> None:
        """Install what the check needs while recording."""

    def stop(self) -> None:
        """Undo what :meth:`start` installed; must not raise and may run twice."""

    def on_op(self, call: OpCall) -> Iterable[Finding] | None:
        """A call to one of :attr:`ops` returned."""
        return None

    def on_backward(self, call: BackwardCall) -> Iterable[Finding] | None:
        """A ``backward()``/``autograd.grad`` is about to run."""
        return None

    def on_backward_error(self, call: BackwardCall) -> Iterable[Finding] | None:
        """That call raised ``call.error``; its roots are still alive."""
        return None

    def on_step(self, step: StepCall) -> Iterable[Finding] | None:
        """An optimizer step ran."""
        return None

    def on_namespace(self, run: Run, namespace: Mapping[str, Any]) -> Iterable[Finding] | None:
        """A finished script's globals (``gradprobe diagnose``)."""
        return None

    def conclude(self, run: Run) -> Iterable[Finding] | None:
        """Findings that need the whole run (also asked for mid-run snapshots)."""
        return None

    def on_error(self, run: Run, found: Sequence[Finding]) -> Iterable[Finding] | None:
        """The recorded code raised ``run.error``; ``found`` is what was concluded."""
        return None


def check_name(check: type[Check] | Check) -> str:
    """``module:ClassName``, or the check's own ``name``."""
    cls = check if isinstance(check, type) else type(check)
    return cls.name or f"{cls.__module__}:{cls.__qualname__}"


_C = TypeVar("_C", bound=type[Check])
_lock = threading.Lock()
_registered: dict[str, type[Check]] = {}
_entry_points_loaded = False
_CODE = re.compile(r"[A-Z][A-Z0-9]*[0-9]{3}")


def register(check: _C) -> _C:
    """Register a :class:`Check` subclass; usable as a class decorator.

    Registering the same class twice has no effect; another class under a name already
    taken replaces it (a reloaded module). Codes the check reports must be registered, or
    brought by the check in ``new_codes``.

    Raises:
        GradprobeTypeError: ``check`` is not a subclass of :class:`Check`.
        GradprobeValueError: a code in ``codes`` is unknown.
    """
    given: object = check  # from a plug-in: anything at all
    if not (isinstance(given, type) and issubclass(given, Check)):
        msg = (
            f"gradprobe.checks.register() expects a subclass of gradprobe.checks.Check, got "
            f"{describe(check)}. Subclass Check and implement the events it needs."
        )
        raise GradprobeTypeError(msg)
    brought: tuple[object, ...] = check.new_codes  # from a plug-in: anything at all
    for code in brought:
        if not isinstance(code, Code) or not _CODE.fullmatch(code.code):
            msg = (
                f"{check_name(check)}.new_codes holds {describe(code)}; each entry must be a "
                "gradprobe.Code whose code is capitals then three digits, such as 'ACME101'."
            )
            raise GradprobeValueError(msg)
        register_code(code)
    unknown = [code for code in check.codes if code not in CODES]
    if unknown:
        msg = (
            f"{check_name(check)} reports {', '.join(map(repr, unknown))}, which "
            "gradprobe.CODES does not know; bring them in the check's new_codes."
        )
        raise GradprobeValueError(msg)
    with _lock:
        _registered[check_name(check)] = check
    return check


def registered() -> tuple[type[Check], ...]:
    """Every registered check class, built-in ones first, then those installed through
    the ``gradprobe.checks`` entry-point group, then those registered in code."""
    _load_entry_points()
    with _lock:
        return tuple(_registered.values())


def _load_entry_points() -> None:
    """Import the checks other distributions declare, once per process. A plug-in that
    fails to load is skipped with a warning; gradprobe's own checks still run."""
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    from importlib.metadata import entry_points

    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            loaded = entry.load()
            if isinstance(loaded, type) and issubclass(loaded, Check):
                register(loaded)
        except Exception as problem:  # noqa: BLE001  (a broken plug-in must not stop the run)
            warnings.warn(
                f"gradprobe could not load the check {entry.value!r} (entry point "
                f"{entry.name!r} of {ENTRY_POINT_GROUP!r}): {type(problem).__name__}: "
                f"{problem}. The other checks still run.",
                GradprobeWarning,
                stacklevel=2,
            )
