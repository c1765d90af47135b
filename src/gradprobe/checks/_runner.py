"""One runner calls the checks and keeps them apart: a check that raises costs only its own
findings, reported as one GP199 that names it.

The runner makes one instance of each check for one recording and a table from event to
the checks subscribed to it (a dict lookup per event). It never raises out of a call into
a check: the user's program must not break because one of gradprobe's analyses did.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gradprobe.checks._api import (
    EVENTS,
    BackwardCall,
    Check,
    OpCall,
    Run,
    StepCall,
    check_name,
    registered,
)
from gradprobe.findings import Finding, make_finding

__all__ = ["CheckRunner", "internal_finding"]


def internal_finding(name: str, problem: BaseException) -> Finding:
    """GP199: the check ``name`` raised ``problem``."""
    return make_finding(
        "GP199",
        message=(
            f"gradprobe's check {name!r} failed ({type(problem).__name__}: {problem}); the "
            "other findings are unaffected. Please report this with the script."
        ),
        details={"check": name, "error": type(problem).__name__},
    )


class CheckRunner:
    """The checks of one recording and the table of who listens to what.

    Example:
        >>> from gradprobe.checks import Check, Run
        >>> class Broken(Check):
        ...     def conclude(self, run):
        ...         raise KeyError("boom")
        >>> runner = CheckRunner([Broken])
        >>> [(f.code, f.details["check"]) for f in runner.conclude(Run(events=None))]
        [('GP199', 'gradprobe.checks._runner:Broken')]
    """

    def __init__(self, checks: Iterable[type[Check]] | None = None) -> None:
        self.failed: list[Finding] = []
        self._failed_names: set[str] = set()
        self.checks: list[Check] = []
        for cls in registered() if checks is None else checks:
            try:
                self.checks.append(cls())
            except Exception as problem:  # noqa: BLE001
                self._fail(check_name(cls), problem)
        self._table: dict[str, list[Check]] = {event: [] for event in EVENTS}
        for check in self.checks:
            for event in type(check).subscriptions():
                self._table[event].append(check)
        self._ops: dict[Any, list[Check]] = {}
        for check in self._table["on_op"]:
            for func in type(check).ops:
                self._ops.setdefault(func, []).append(check)
        self._started: list[Check] = []

    # -- lifecycle --------------------------------------------------------------------------

    def start(self, run: Run) -> None:
        """Start every check that asked to; one that fails to start is stopped and left out
        of the run (and reported)."""
        for check in list(self._table["start"]):
            try:
                check.start(run)
            except Exception as problem:  # noqa: BLE001
                self._fail(check_name(check), problem)
                self._stop(check)
                self._drop(check)
            else:
                self._started.append(check)

    def stop(self) -> None:
        """Stop the started checks, last started first; never raises."""
        started, self._started = self._started, []
        for check in reversed(started):
            self._stop(check)

    # -- events -----------------------------------------------------------------------------

    @property
    def ops(self) -> Mapping[Any, list[Check]]:
        """torch function -> the checks whose ``on_op`` wants its calls."""
        return self._ops

    @property
    def wants_steps(self) -> bool:
        """Whether some check listens to optimizer steps."""
        return bool(self._table["on_step"])

    def op(self, call: OpCall) -> list[Finding]:
        found: list[Finding] = []
        for check in self._ops.get(call.func, ()):
            found.extend(self._call(check, "on_op", call))
        return found

    def backward(self, call: BackwardCall) -> list[Finding]:
        return self._each("on_backward", call)

    def backward_error(self, call: BackwardCall) -> list[Finding]:
        return self._each("on_backward_error", call)

    def step(self, call: StepCall) -> list[Finding]:
        return self._each("on_step", call)

    def namespace(self, run: Run, namespace: Mapping[str, Any]) -> list[Finding]:
        return self._each("on_namespace", run, namespace)

    def conclude(self, run: Run) -> list[Finding]:
        """Every check's end-of-run findings, in registration order, then GP199 for each
        check that failed at any point of the run. With ``run.dying`` set, only the checks
        that read modules or optimizers conclude (they will not see that object again)."""
        if run.dying is not None:
            found: list[Finding] = []
            for check in self._table["conclude"]:
                if type(check).reads_modules:
                    found.extend(self._call(check, "conclude", run))
            return found
        found = self._each("conclude", run)
        if run.final:
            found.extend(self.failed)
        return found

    def error(self, run: Run, found: Sequence[Finding]) -> list[Finding]:
        """Findings about the exception that escaped the recorded code; each check sees
        ``found`` and what the checks before it added, so an error explained once is not
        explained again."""
        added: list[Finding] = []
        for check in self._table["on_error"]:
            added.extend(self._call(check, "on_error", run, [*added, *found]))
        return added

    # -- isolation --------------------------------------------------------------------------

    def _each(self, event: str, *args: Any) -> list[Finding]:
        found: list[Finding] = []
        for check in self._table[event]:
            found.extend(self._call(check, event, *args))
        return found

    def _call(self, check: Check, event: str, *args: Any) -> list[Finding]:
        try:
            result = getattr(check, event)(*args)
            return [] if result is None else list(result)
        except Exception as problem:  # noqa: BLE001  (never break the user's program)
            self._fail(check_name(check), problem)
            return []

    def _fail(self, name: str, problem: BaseException) -> None:
        if name in self._failed_names:
            return  # one GP199 per check, however often it fails
        self._failed_names.add(name)
        self.failed.append(internal_finding(name, problem))

    def _stop(self, check: Check) -> None:
        try:
            check.stop()
        except Exception as problem:  # noqa: BLE001
            self._fail(check_name(check), problem)

    def _drop(self, check: Check) -> None:
        for listeners in (*self._table.values(), *self._ops.values()):
            if check in listeners:
                listeners.remove(check)
