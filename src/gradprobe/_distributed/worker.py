"""Inside a worker process of a diagnosed run: record the worker's target, leave the
findings in the run's directory.

:func:`install` runs at interpreter start (``boot/sitecustomize.py``) when
``GRADPROBE_DIAGNOSE_DIR`` is set: from then on each ``multiprocessing`` process this
interpreter runs (its own, or those a forkserver forks from it) runs its ``run()`` under
:func:`gradprobe.record`. The patch lives as long as the worker interpreter, which exists
only for this run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from gradprobe import _ranklog
from gradprobe.errors import error_text

__all__ = ["install", "leave_findings", "run_recorded"]

_MARK = "__gradprobe_worker__"


def install() -> None:
    """Record the target of every multiprocessing process started in this interpreter."""
    from multiprocessing import process

    real = process.BaseProcess._bootstrap  # type: ignore[attr-defined]
    if getattr(real, _MARK, False):
        return

    def _bootstrap(self: Any, *args: Any, **kwargs: Any) -> Any:
        run = self.run
        self.run = lambda: run_recorded(run)
        return real(self, *args, **kwargs)

    setattr(_bootstrap, _MARK, True)
    process.BaseProcess._bootstrap = _bootstrap  # type: ignore[attr-defined]


def _env_rank() -> int | None:
    value = os.environ.get("RANK")
    return int(value) if value is not None and value.isdigit() else None


def run_recorded(target: Callable[[], object]) -> None:
    """Run ``target`` under :func:`gradprobe.record`; its findings go to the run's
    directory whatever happens (return, exception, ``sys.exit``)."""
    try:
        from gradprobe._record import record

        recording = record()
        recording.__enter__()
    except Exception:  # noqa: BLE001  (unrecorded, but the worker runs)
        target()
        return
    _ranklog.note("process", rank=_env_rank(), argv=sys.argv[:3])
    error: BaseException | None = None
    try:
        target()
    except SystemExit as stop:
        # torch.multiprocessing.spawn catches the function's exception and exits with 1
        # from its handler: the exception is the context of that SystemExit
        error = stop.__context__ if stop.code not in (0, None) and stop.__context__ else None
        raise
    except BaseException as raised:
        error = raised
        raise
    finally:
        try:
            recording.finish(error)
            leave_findings(recording.findings, error)
        except Exception:  # noqa: BLE001, S110  (never turn a worker's exit into a crash)
            pass


def leave_findings(findings: Sequence[Any], error: BaseException | None) -> None:
    """Note this process's findings (and the exception that ended it, if any)."""
    _ranklog.note(
        "findings",
        rank=_env_rank(),
        findings=[finding.to_dict() for finding in findings],
        error=None if error is None else f"{type(error).__name__}: {error_text(error)}",
    )
