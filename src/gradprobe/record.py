"""``with gradprobe.record() as rec:`` — record what autograd saw, then say what went wrong.

While the block runs, gradprobe notes the line that created each autograd node, every
tensor saved for backward with its version at save time, every in-place write with its
line and versions, where graphs were cut, ``.grad`` reads that return None, every
``backward()``/``autograd.grad`` call, and (with ``check_nan``) the first NaN/Inf. When the
block ends, ``rec.findings`` lists what went wrong, each finding with the line to change
(role ``cause``). Errors raised inside the block propagate unchanged; nothing recorded keeps
a tensor alive, and every mode, hook and patch is removed on exit, also on exceptions.

Example:
    >>> import torch, gradprobe
    >>> with gradprobe.record() as rec:
    ...     x = torch.ones(3, requires_grad=True)
    ...     y = x.sigmoid()
    ...     y.data.zero_()
    ...     y.sum().backward()
    >>> [finding.code for finding in rec.findings]
    ['GP108']
"""

from __future__ import annotations

import sys
import threading
import warnings
import weakref
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager, suppress
from types import TracebackType
from typing import TYPE_CHECKING, Any, final

import torch

from gradprobe import _blame
from gradprobe._gradnone import none_grad_used
from gradprobe._probe import Probe, probe_factories
from gradprobe._recorder import Backward, Events, RecorderMode, _user_line, frameless, patches
from gradprobe.errors import GradprobeError
from gradprobe.explain import explain_error
from gradprobe.findings import Finding
from gradprobe.hooks._inplace import hook_writes

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

__all__ = ["Recording", "RecordingError", "record"]

_active = threading.local()


class RecordingError(GradprobeError, RuntimeError):
    """``record()`` was used in a way it cannot support (re-entering an active or ended
    recording). Nested ``record()`` blocks are fine: each records what runs inside it."""


@final
class Recording:
    """What one ``record()`` block saw; ``findings`` is filled when the block ends."""

    def __init__(self, *, check_nan: bool = True, node_hook: bool = True) -> None:
        self.check_nan = check_nan
        self.node_hook = node_hook
        self.events = Events()
        self.findings: list[Finding] = []
        # what the block raised; once the findings are made, a copy without its traceback
        # (the user's frames would keep their model and data alive with this Recording)
        self.error: BaseException | None = None
        self._mode: RecorderMode | None = None
        self._stack: ExitStack | None = None
        self._modules: weakref.WeakSet[torch.nn.Module] = weakref.WeakSet()
        self._probes: list[Probe] = []
        self._closed = False
        self._prechecked: tuple[int, int, int] = (-1, 0, 0)

    # -- context manager -------------------------------------------------------------------

    def __enter__(self) -> Recording:
        outer = _stack()
        if self in outer:
            msg = "this Recording is already active; a record() block cannot be re-entered."
            raise RecordingError(msg)
        if self._closed:
            msg = "this Recording has ended; start a new one with gradprobe.record()."
            raise RecordingError(msg)
        stack = ExitStack()
        try:
            mode = RecorderMode(self.events, check_nan=self.check_nan)
            mode.backward_hook = self._on_backward
            self._mode = mode
            stack.enter_context(patches(mode))
            creation_hook = getattr(torch.autograd.graph, "node_creation_hook", None)
            # torch >= 2.14; an inner recording (a script that records, run by diagnose)
            # walks instead, leaving the hook to the outer one.
            if creation_hook is not None and self.node_hook and not outer:
                stack.enter_context(creation_hook(mode.created))
                mode.hooked = True
            modules = self._modules

            def seen(module: torch.nn.Module, _args: Any) -> None:
                modules.add(module)
                if not mode.outer_module:  # the outermost call: note the line making it
                    mode.outer_module = id(module)
                    mode.outer_ref = weakref.ref(module)
                    mode.outer_line = _user_line(sys._getframe(1))
                elif module not in mode.called_inside:
                    mode.called_inside[module] = mode.outer_ref

            def done(module: torch.nn.Module, _args: Any, _output: Any) -> None:
                if mode.outer_module == id(module):
                    mode.outer_module = 0
                    mode.outer_ref = None
                    mode.outer_line = None

            # Compiled modules: dynamo must not trace into these (it would fail on the
            # bookkeeping, and the hook is not the user's computation).
            seen = _not_compiled(seen)
            done = _not_compiled(done)
            handle = torch.nn.modules.module.register_module_forward_pre_hook(seen)
            stack.callback(handle.remove)
            handle = torch.nn.modules.module.register_module_forward_hook(done, always_call=True)
            stack.callback(handle.remove)
            # torch.compile(module) warns about global hooks; these two only take notes.
            stack.enter_context(_quiet(_GLOBAL_HOOKS_WARNING))
            for factory in probe_factories():
                probe = factory()
                probe.start()
                stack.callback(probe.stop)
                self._probes.append(probe)
            stack.enter_context(mode)
        except BaseException:
            stack.close()
            raise
        self._stack = stack
        outer.append(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.finish(exc)

    def finish(self, error: BaseException | None = None) -> None:
        """End the recording (the ``with`` block does this) and compute the findings."""
        if self._closed:
            return
        self._closed = True
        active = _stack()
        if self in active:
            active.remove(self)
        stack, self._stack = self._stack, None
        if stack is not None:
            stack.close()
        self.error = error
        try:
            self.findings = self._conclude(error)
        finally:
            self.error = None if error is None else frameless(error)
            mode, self._mode = self._mode, None
            if mode is not None:
                mode.pending = []
                mode.taint.clear()
                mode.leaves.clear()
            self._modules = weakref.WeakSet()

    # -- analyses ---------------------------------------------------------------------------

    def _on_backward(
        self, event: Backward, roots: list[torch.Tensor], args: Any, kwargs: Any
    ) -> None:
        mode = self._mode
        if mode is None:
            return
        try:
            if event.error is None:
                found = _blame.before_backward(self.events, roots)
                self._prechecked = (event.order, len(self.events.analyses), len(found))
            elif self._prechecked[0] == event.order and self._prechecked[2]:
                # Already explained before backward ran: add where it raised.
                start, count = self._prechecked[1], self._prechecked[2]
                location = _blame.location(event.line, "error")
                if location is not None:
                    from dataclasses import replace

                    analyses = self.events.analyses
                    for index in range(start, start + count):
                        finding = analyses[index]
                        analyses[index] = replace(finding, locations=(*finding.locations, location))
                return
            else:
                found = _blame.after_error(
                    self.events,
                    event,
                    roots,
                    event.error,
                    lambda tensor: mode.taint.get(tensor) or frozenset(),
                )
                location = _blame.location(event.line, "error")
                if location is not None:
                    from dataclasses import replace

                    found = [
                        replace(f, locations=(*f.locations, replace(location, role="error")))
                        for f in found
                    ]
        except Exception as problem:  # noqa: BLE001  (never break the user's program)
            found = [_internal(problem)]
        self.events.analyses.extend(found)

    def _conclude(self, error: BaseException | None) -> list[Finding]:
        findings = list(self.events.analyses)
        try:
            findings.extend(_blame.final_findings(self.events, list(self._modules)))
            findings.extend(self._optimizer_coverage())
        except Exception as problem:  # noqa: BLE001
            findings.append(_internal(problem))
        for probe in self._probes:
            try:
                findings.extend(probe.findings(error))
            except Exception as problem:  # noqa: BLE001
                findings.append(_internal(problem))
        if error is not None and isinstance(error, Exception):
            findings[:0] = _blame.scalar_backward(self.events, error)
            try:
                findings[:0] = none_grad_used(self.events, error, findings)
            except Exception as problem:  # noqa: BLE001
                findings.append(_internal(problem))
            explained = explain_error(error)
            same = _EXPLAINS_SAME.get(explained.code, {explained.code}) if explained else set()
            if explained is not None and not any(f.code in same for f in findings):
                findings.insert(0, _with_cause(explained))
        if self.events.hook_writes:
            events = self.events
            findings[:0] = hook_writes(events.hook_writes, events.tensor_hooks, _blame.location)
        return _dedupe(findings)

    def _optimizer_coverage(self) -> list[Finding]:
        mode = self._mode
        if mode is None:
            return []
        inside = {id(m): ref() for m, ref in mode.called_inside.items() if ref is not None}
        return _blame.optimizer_coverage(
            self.events, list(self._modules), list(mode.optimizers), inside
        )

    # -- while recording ---------------------------------------------------------------------

    @property
    def modules(self) -> list[torch.nn.Module]:
        """The modules called so far in this recording (held weakly)."""
        return list(self._modules)

    def snapshot(self) -> list[Finding]:
        """The findings so far, without ending the recording (the pytest plugin and
        ``gradprobe.testing`` ask mid-test); ``findings`` is set when the block ends."""
        if self._closed:
            return list(self.findings)
        found = list(self.events.analyses)
        try:
            found.extend(_blame.final_findings(self.events, list(self._modules)))
        except Exception as problem:  # noqa: BLE001  (a partial run must not break the caller)
            found.append(_internal(problem))
        return _dedupe(found)

    def inspect_globals(self, namespace: Mapping[str, Any]) -> None:
        """Look at what a finished script still holds (``gradprobe diagnose`` passes its
        globals): lists of outputs whose graphs were never freed (GP112)."""
        try:
            self.events.analyses.extend(_blame.live_graphs(self.events, namespace))
        except Exception as problem:  # noqa: BLE001  (the script's own results come first)
            self.events.analyses.append(_internal(problem))

    # -- output -----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """``{"findings": [finding.to_dict(), ...]}``."""
        return {"findings": [finding.to_dict() for finding in self.findings]}

    def __iter__(self) -> Iterator[Finding]:
        return iter(self.findings)

    def __len__(self) -> int:
        return len(self.findings)

    def __repr__(self) -> str:
        state = "recording" if self._stack is not None else "ended"
        codes = ", ".join(f.code for f in self.findings[:5])
        return f"<Recording {state}, {len(self.events.nodes)} nodes, findings: [{codes}]>"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from gradprobe.render.findings import findings_view

        yield findings_view(tuple(self.findings), ok_text="gradprobe: nothing to report")


# errors raised by the very line to change: an in-place write on a leaf or on a view
# autograd cannot rebase, requires_grad on an integer tensor or on a non-leaf
_RAISED_AT_CAUSE = frozenset(("GP102", "GP124", "GP125", "GP126"))


def _with_cause(finding: Finding) -> Finding:
    """An error recognised from its text alone: where it was raised is what to change
    (an in-place write on a leaf is refused at the line that does it)."""
    from dataclasses import replace

    if finding.code not in _RAISED_AT_CAUSE:
        return finding
    return replace(
        finding,
        locations=tuple(
            replace(loc, role="cause") if loc.role == "error" else loc for loc in finding.locations
        ),
    )


# An error explained from its text alone adds nothing when the recording already explained
# it with lines: a version-counter error is GP101, GP109 (an optimizer step) or GP112 (a
# graph carried across iterations); a hooked module's output written in place is GP305.
_EXPLAINS_SAME = {"GP101": {"GP101", "GP109", "GP112"}, "GP124": {"GP124", "GP305"}}


_GLOBAL_HOOKS_WARNING = r"Using `torch\.compile\(module\)` when there are global hooks"


@contextmanager
def _quiet(message: str) -> Iterator[None]:
    """Ignore warnings matching ``message`` until exit, leaving every other filter alone
    (``warnings.catch_warnings`` would restore the whole list, undoing the user's changes)."""
    warnings.filterwarnings("ignore", message=message)
    added = warnings.filters[0]
    try:
        yield
    finally:
        with suppress(ValueError):
            warnings.filters.remove(added)  # type: ignore[attr-defined]
        warnings._filters_mutated()  # type: ignore[attr-defined]


def _not_compiled(hook: Any) -> Any:
    """``hook`` run eagerly even inside a ``torch.compile``d module."""
    disable = getattr(getattr(torch, "_dynamo", None), "disable", None)
    return disable(hook) if disable is not None else hook


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: set[tuple[str, tuple[tuple[str, int, str], ...]]] = set()
    carried: set[tuple[str, int]] = set()  # GP112 causes already explained
    out: list[Finding] = []
    for finding in findings:
        key = (finding.code, tuple((l.file, l.line, l.role) for l in finding.locations))
        if key in seen:
            continue
        seen.add(key)
        if finding.code == "GP112":
            causes = {(l.file, l.line) for l in finding.locations if l.role == "cause"}
            if causes and causes <= carried:
                continue  # the end-of-run count of a chain a backward error already named
            carried |= causes
        out.append(finding)
    return out


def _internal(problem: Exception) -> Finding:
    from gradprobe.findings import make_finding

    return make_finding(
        "GP199",
        message=(
            f"gradprobe's own analysis failed ({type(problem).__name__}: {problem}); the "
            "other findings are unaffected. Please report this with the script."
        ),
    )


def record(*, check_nan: bool = True, node_hook: bool = True) -> Recording:
    """Record autograd activity in a ``with`` block and explain what went wrong.

    Args:
        check_nan: check floating results for NaN/Inf until the first NaN, and gradients
            after each backward (CPU tensors; a host sync per op on accelerators, so
            turn it off there if speed matters).
        node_hook: on torch >= 2.14, learn about every autograd node from
            ``torch.autograd.graph.node_creation_hook`` as it is made (also nodes made
            where no torch function call is visible); False uses the 2.13 way on any
            version (walking down from each call's results).

    Returns:
        The :class:`Recording`; its ``findings`` are filled when the block ends.

    Recordings nest: each block records what runs inside it, so ``gradprobe diagnose`` can
    run a script that uses ``record()`` itself.

    Raises:
        RecordingError: on entering a Recording that is active or has ended.

    Example::

        with gradprobe.record() as rec:
            train_step()
        for finding in rec.findings:
            print(finding)
    """
    return Recording(check_nan=check_nan, node_hook=node_hook)


def active_recording() -> Recording | None:
    """The recording active in this thread, if any."""
    active = _stack()
    return active[-1] if active else None


def _stack() -> list[Recording]:
    stack: list[Recording] | None = getattr(_active, "stack", None)
    if stack is None:
        stack = _active.stack = []
    return stack
