"""``with gradprobe.record() as rec:`` — record what autograd saw, then say what went wrong.

While the block runs, gradprobe notes the line that created each autograd node, every
tensor saved for backward with its version at save time, every in-place write with its
line and versions, where graphs were cut, ``.grad`` reads that return None, every
``backward()``/``autograd.grad`` call, and (with ``check_nan``) the first NaN/Inf. When the
block ends, ``rec.findings`` lists what went wrong, each finding with the line to change
(role ``cause``). Errors raised inside the block propagate unchanged; nothing recorded keeps
a tensor alive, and every mode, hook and patch is removed on exit, also on exceptions (the
patches and global hooks all recordings share are removed when the last one ends).

A recording observes the thread that entered it, and no other: other threads training at
the same time run as if gradprobe were not there (NOTE [threads] in ``gradprobe._threads``).

Example:
    >>> import torch, gradprobe
    >>> with gradprobe.record() as rec:
    ...     x = torch.ones(3, requires_grad=True)
    ...     y = x.sigmoid()
    ...     _ = y.data.zero_()
    ...     y.sum().backward()
    >>> [finding.code for finding in rec.findings]
    ['GP108']
"""

from __future__ import annotations

import sys
import threading
import warnings
import weakref
from collections.abc import Collection, Iterator, Mapping
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import replace
from types import TracebackType
from typing import TYPE_CHECKING, Any, final

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook

from gradprobe._active import RECORDINGS
from gradprobe._compat import node_creation_hook
from gradprobe._lifetimes import watch_lifetimes
from gradprobe._patch import Patches, SharedPatches
from gradprobe._pictures import illustrate
from gradprobe._recorder import (
    _MAX_EVENTS,
    Backward,
    Events,
    RecorderMode,
    _user_line,
    frameless,
)
from gradprobe._recorder.events import EvalGraphs
from gradprobe._recorder_patches import MODES, patches
from gradprobe._source import line_location
from gradprobe._threads import ThreadBound
from gradprobe._trace import trace
from gradprobe._tracebacks import user_traceback
from gradprobe.checks import BackwardCall, CheckRunner, OpCall, Run, StepCall
from gradprobe.errors import RecordingError
from gradprobe.findings import Finding

if TYPE_CHECKING:
    import os
    from pathlib import Path

    from rich.console import Console, ConsoleOptions, RenderResult

    from gradprobe.graph import Graph

__all__ = ["Recording", "RecordingError", "record"]

# The recordings each thread entered, outermost first (NOTE [threads] in gradprobe._threads);
# check() and the testing helpers ask gradprobe._active for this thread's.
_active: ThreadBound[Recording] = RECORDINGS


@final
class Recording:
    """What one ``record()`` block saw; ``findings`` is filled when the block ends.

    ``print(rec)`` (``str``) is the plain-text report: each finding's code, kind and title,
    its message, every location (the ``cause`` is the line to change) and the fix; rich's
    ``print`` shows the same as panels. A Recording is always true, with or without
    findings (``if rec:`` does not ask whether something was found): ask
    ``rec.findings``, or ``len(rec)``, which counts them.
    """

    def __init__(self, *, check_nan: bool = True, node_hook: bool = True) -> None:
        self.check_nan = check_nan
        self.node_hook = node_hook
        self._events = Events()
        self.findings: list[Finding] = []
        # what the recording could not observe (note codes such as GP503): not problems
        self.notes: list[Finding] = []
        # what the block raised; once the findings are made, a copy without its traceback
        # (the user's frames would keep their model and data alive with this Recording)
        self.error: BaseException | None = None
        self._mode: RecorderMode | None = None
        self._stack: ExitStack | None = None
        self._modules: weakref.WeakSet[torch.nn.Module] = weakref.WeakSet()
        self._checks: CheckRunner | None = None
        self._thread = 0  # the thread that entered the block
        # findings of checks that concluded when a module or optimizer they read was freed
        self._early: list[Finding] = []
        self._lock = threading.RLock()
        self._closed = False
        self._prechecked: tuple[int, int, int] = (-1, 0, 0)
        self._holder: Any = None  # where _active holds this recording while it runs

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
        self._thread = threading.get_ident()
        try:
            mode = RecorderMode(self._events, check_nan=self.check_nan)
            mode.backward_hook = self._on_backward
            self._mode = mode
            # Patches and global hooks are shared by every recording in the process and
            # serve the recordings of the calling thread (NOTE [threads]).
            stack.enter_context(patches(mode))
            # torch >= 2.14; an inner recording (a script that records, run by diagnose)
            # walks instead, leaving the hook to the outer one.
            if _CREATION_HOOK is not None and self.node_hook and not outer:
                stack.enter_context(_NODE_HOOK.held())
                mode.hooked = _node_hook_fires_here()
            stack.enter_context(_MODULE_HOOKS.held())
            checks = self._checks = CheckRunner()
            stack.callback(checks.stop)
            checks.start(self._run())
            if checks.ops:
                mode.watched_ops = checks.ops
                mode.op_hook = self._on_op
            stack.enter_context(watch_lifetimes(self._on_dying))
            if checks.wants_steps:
                handle = register_optimizer_step_post_hook(_not_compiled(self._on_step))
                stack.callback(handle.remove)
            stack.enter_context(mode)
            stack.callback(MODES.remove, MODES.add(mode), mode)
        except BaseException:
            stack.close()
            raise
        self._stack = stack
        self._holder = _active.add(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is not None:  # it goes on with the frames it would have without us
            user_traceback(exc)
        self.finish(exc)

    def finish(self, error: BaseException | None = None) -> None:
        """End the recording (the ``with`` block does this) and compute the findings."""
        if self._closed:
            return
        self._closed = True
        holder, self._holder = self._holder, None
        if holder is not None:
            _active.remove(holder, self)
        stack, self._stack = self._stack, None
        if stack is not None:
            stack.close()
        self.error = error
        try:
            found = self._conclude(error)
            self.findings = [finding for finding in found if not finding.is_note]
            self.notes = [finding for finding in found if finding.is_note]
        finally:
            self.error = None if error is None else frameless(error)
            mode, self._mode = self._mode, None
            if mode is not None:
                mode.pending = []
                mode.taint.clear()
                mode.leaves.clear()
            self._modules = weakref.WeakSet()
            self._checks = None  # each check's state ends with the recording; findings stay
            self._early = []

    # -- analyses ---------------------------------------------------------------------------

    def _run(self, error: BaseException | None = None, *, final: bool = True) -> Run:
        """What the checks look at now."""
        mode = self._mode
        inside: dict[int, Any] = {}
        optimizers: list[Any] = []
        taint = Run.taint
        if mode is not None:
            inside = {id(m): ref() for m, ref in mode.called_inside.items() if ref is not None}
            optimizers = list(mode.optimizers)
            mode_taint = mode.taint

            def taint(tensor: Any) -> frozenset[int]:
                return mode_taint.get(tensor) or frozenset()

        return Run(
            events=self._events,
            modules=list(self._modules),
            optimizers=optimizers,
            inside=inside,
            error=error,
            taint=taint,
            final=final,
        )

    def _on_backward(
        self, event: Backward, roots: list[torch.Tensor], args: Any, kwargs: Any
    ) -> None:
        checks = self._checks
        if self._mode is None or checks is None:
            return
        asked = kwargs.get("inputs", args[1] if event.op == "grad" and len(args) > 1 else None)
        # never iterate a generator: torch has yet to read it
        inputs = (
            [asked]
            if isinstance(asked, torch.Tensor)
            else [t for t in asked if isinstance(t, torch.Tensor)]
            if isinstance(asked, Collection)
            else []
        )
        call = BackwardCall(self._run(final=False), event, roots, inputs)
        if event.error is None:
            found = self._illustrated(checks.backward(call), roots)
            self._prechecked = (event.order, len(self._events.analyses), len(found))
        elif self._prechecked[0] == event.order and self._prechecked[2]:
            # Already explained before backward ran: add where it raised.
            start, count = self._prechecked[1], self._prechecked[2]
            location = line_location(event.line, "error")
            if location is not None:
                analyses = self._events.analyses
                for index in range(start, start + count):
                    finding = analyses[index]
                    analyses[index] = replace(finding, locations=(*finding.locations, location))
            return
        else:
            found = self._illustrated(checks.backward_error(call), roots)
            location = line_location(event.line, "error")
            if location is not None:
                found = [replace(f, locations=(*f.locations, location)) for f in found]
        self._events.analyses.extend(found)

    def _illustrated(self, found: list[Finding], roots: list[torch.Tensor]) -> list[Finding]:
        """Findings made at a backward call, each with the slice of the graph being
        backpropagated around its problem (traced now, while that graph exists)."""
        if not found:
            return found
        live = self._live_graph(roots)
        return [illustrate(finding, self._events, live) for finding in found]

    def _live_graph(self, roots: list[torch.Tensor]) -> Graph | None:
        """The graph of ``roots``, its parameters named after the recorded modules; traced
        inside this recording, so its saved tensors know their versions at save time."""
        mode = self._mode
        tensors = [root for root in roots if isinstance(root, torch.Tensor)]
        if mode is None or not tensors:
            return None
        try:
            with torch._C.DisableTorchFunction():
                names: dict[str, torch.Tensor] = {}
                for module in list(self._modules):
                    if module not in mode.called_inside:  # a top-level model
                        for name, param in module.named_parameters():
                            names.setdefault(name, param)
                return trace(*tensors, names=names, max_nodes=_PICTURE_NODES)
        except Exception:  # noqa: BLE001  (a picture is never worth failing the recording)
            return None

    def _on_op(
        self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any, line: Any
    ) -> None:
        checks = self._checks
        if checks is not None and self._mode is not None:
            call = OpCall(self._run(final=False), func, args, kwargs, result, line)
            self._events.analyses.extend(checks.op(call))

    def _on_step(self, optimizer: Any, _args: Any, _kwargs: Any) -> None:
        checks = self._checks
        if checks is None or self._mode is None or threading.get_ident() != self._thread:
            return  # another thread's optimizer: not this recording's to look at
        made = self._events.optimizer_lines.get(id(optimizer))
        step = StepCall(
            self._run(final=False),
            optimizer,
            _user_line(sys._getframe(1)),
            made[1] if made is not None else None,
        )
        self._events.analyses.extend(checks.step(step))

    def _on_dying(self, obj: Any) -> None:
        """A module or optimizer is about to be freed (a model local to ``main()``): the
        checks that read them conclude now, while it is whole."""
        checks, mode = self._checks, self._mode
        if checks is None or mode is None or self._closed:
            return
        if isinstance(obj, torch.nn.Module):
            if obj not in self._modules or obj in mode.called_inside:
                return  # not called while recording, or a part of a bigger model
        elif obj not in mode.optimizers:
            return
        with self._lock:
            run = self._run(final=False)
            if isinstance(obj, torch.nn.Module) and obj not in run.modules:
                run.modules = [*run.modules, obj]  # its weak references may be cleared
            run.dying = obj
            self._early.extend(checks.conclude(run))

    def _conclude(self, error: BaseException | None) -> list[Finding]:
        checks = self._checks
        if checks is None:
            return list(self._events.analyses)
        run = self._run(error)
        with self._lock:
            findings = [*self._events.analyses, *checks.conclude(run), *self._early]
            self._early = []
        if error is not None:
            findings[:0] = checks.error(run, findings)
        return [illustrate(finding, self._events) for finding in _dedupe(findings)]

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
        found = list(self._events.analyses)
        if self._checks is not None:
            found.extend(self._checks.conclude(self._run(final=False)))
        return [finding for finding in _dedupe([*found, *self._early]) if not finding.is_note]

    def inspect_globals(self, namespace: Mapping[str, Any]) -> None:
        """Look at what a finished script still holds (``gradprobe diagnose`` passes its
        globals): lists of outputs whose graphs were never freed (GP112)."""
        if self._checks is not None:
            self._events.analyses.extend(self._checks.namespace(self._run(), namespace))

    # -- output -----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """``{"findings": [finding.to_dict(), ...], "notes": [...]}``."""
        return {
            "findings": [finding.to_dict() for finding in self.findings],
            "notes": [note.to_dict() for note in self.notes],
        }

    def to_svg(self) -> str:
        """Every finding's picture (:meth:`Finding.to_svg`) in one SVG, one frame each;
        a short note when there is nothing to report.

        Raises:
            GraphvizNotFoundError: no Graphviz layout engine (see ``gradprobe.render``).
        """
        from gradprobe.render.picture import findings_svg

        return findings_svg(self.findings)

    def save_svg(self, path: str | os.PathLike[str]) -> Path:
        """Write :meth:`to_svg` to ``path`` (UTF-8) and return the path."""
        from gradprobe.render.picture import save_findings_svg

        return save_findings_svg(self.findings, path)

    def to_html(self, *, watch: Any = None) -> str:
        """The interactive viewer of this recording as one self-contained HTML page: the
        recorded graph (grouped by ``backward()`` call, each node with the line that made
        it) and the findings, a click on one highlighting its slice
        (:func:`gradprobe.save_html`)."""
        from gradprobe.render.html import to_html

        return to_html(self, watch=watch)

    def save_html(self, path: str | os.PathLike[str], *, watch: Any = None) -> Path:
        """Write :meth:`to_html` to ``path`` (UTF-8) and return the path."""
        from gradprobe.render.html import save_html

        return save_html(self, path, watch=watch)

    def __iter__(self) -> Iterator[Finding]:
        return iter(self.findings)

    def __len__(self) -> int:
        return len(self.findings)

    def __bool__(self) -> bool:
        # Without this, __len__ would make a recording with no findings false.
        return True

    def _header(self) -> str:
        if self._stack is not None:
            return (
                f"gradprobe.record: still recording ({len(self._events.nodes)} nodes so far); "
                "the findings are made when the block ends"
            )
        count = len(self.findings)
        return (
            f"gradprobe.record: {count} finding{'' if count == 1 else 's'}"
            if count
            else "gradprobe.record: nothing to report"
        )

    def __str__(self) -> str:
        from gradprobe.render.findings import findings_text

        if self._stack is not None:
            return self._header()
        notes = "".join(f"\nnote {note.code}: {note.message}" for note in self.notes)
        return findings_text(self.findings, header=self._header()) + notes

    def _report_html(self) -> str:
        """The report as HTML: the same rows as ``str()``."""
        from gradprobe.render.findings import findings_view
        from gradprobe.render.html_report import to_html

        if self._stack is not None:
            return to_html("", header=self._header())
        return to_html(findings_view(tuple(self.findings)), header=self._header())

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, str]:
        """Jupyter: the interactive viewer (:meth:`save_html`) where the front-end runs
        JavaScript, the findings report inside it where it does not. A recording still
        running, or one that saw no autograd op, shows the report alone."""
        from gradprobe.render.html import notebook_bundle

        report = self._report_html()
        if self._stack is not None or not self._events.nodes:
            return {"text/html": report, "text/plain": repr(self)}
        return notebook_bundle(self, report=report)

    def _repr_html_(self) -> str:
        """The ``text/html`` of :meth:`_repr_mimebundle_`."""
        return self._repr_mimebundle_()["text/html"]

    def __repr__(self) -> str:
        state = "recording" if self._stack is not None else "ended"
        codes = ", ".join(f.code for f in self.findings[:5])
        return f"<Recording {state}, {len(self._events.nodes)} nodes, findings: [{codes}]>"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from gradprobe.render.findings import findings_view

        yield findings_view(tuple(self.findings), ok_text="gradprobe: nothing to report")


_PICTURE_NODES = 20_000  # traced at most for a finding's picture at a backward call
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
    run a script that uses ``record()`` itself. Each records the thread that entered it
    only; threads may record at the same time, each in its own block.

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
    active = _active.own()
    return active[-1] if active else None


def _stack() -> tuple[Recording, ...]:
    """The recordings the calling thread entered, outermost first."""
    return _active.own()


# -- what every recording shares (NOTE [threads]) -------------------------------------------


def _built_in_forward(mode: RecorderMode, module: torch.nn.Module) -> None:
    """Note a layer with parameters first called inside a forward that was running when it
    was built: nn.Linear(...)(x) in forward() makes a new, untrained layer every call."""
    events = mode.events
    made = events.module_orders.get(id(module))
    if made is None or made < mode.outer_order:
        return
    line = events.module_lines.get(id(module))
    count, _, _ = events.forward_layers.get(line, (0, "", ""))
    if count or len(events.forward_layers) < 64:
        outer = mode.outer_ref() if mode.outer_ref is not None else None
        events.forward_layers[line] = (count + 1, type(module).__name__, type(outer).__name__)


def _note_inputs(events: Events, module: torch.nn.Module, args: Any) -> None:
    """What a module with parameters of its own is applied to, on its first call with grad
    enabled: the nodes of its tensor inputs (none for data)."""
    if not torch.is_grad_enabled() or len(events.module_inputs) >= _MAX_EVENTS:
        return
    keys = []
    for arg in args if isinstance(args, tuple) else (args,):
        fn = arg.grad_fn if isinstance(arg, torch.Tensor) else None
        if fn is not None:
            keys.append((fn.name(), fn._sequence_nr()))
    events.module_inputs[id(module)] = tuple(keys)


def _module_hooks(patches: Patches) -> None:
    """Global module hooks: which modules ran, and the outermost module call's line."""

    def seen(module: torch.nn.Module, _args: Any) -> None:
        for recording in _active.here():
            mode = recording._mode
            if mode is None:
                continue
            recording._modules.add(module)
            mode.reruns.called(module, sys._getframe(1))
            if module._parameters and id(module) not in mode.events.module_inputs:
                _note_inputs(mode.events, module, _args)
            if not mode.outer_module:  # the outermost call: note the line making it
                mode.outer_module = id(module)
                mode.outer_ref = weakref.ref(module)
                mode.outer_line = _user_line(sys._getframe(1))
                mode.outer_order = next(mode.order)
            elif module not in mode.called_inside:
                mode.called_inside[module] = mode.outer_ref
                if module._parameters:
                    _built_in_forward(mode, module)

    def done(module: torch.nn.Module, _args: Any, output: Any) -> None:
        for recording in _active.here():
            mode = recording._mode
            if mode is not None:
                mode.reruns.returned(module)
            if mode is not None and mode.outer_module == id(module):
                if not module.training and torch.is_grad_enabled():
                    with suppress(Exception):
                        _eval_graph(mode, module, output)
                mode.outer_module = 0
                mode.outer_ref = None
                mode.outer_line = None

    # Compiled modules: dynamo must not trace into these (it would fail on the
    # bookkeeping, and the hook is not the user's computation).
    seen = _not_compiled(seen)
    done = _not_compiled(done)
    handle = torch.nn.modules.module.register_module_forward_pre_hook(seen)
    patches.call(handle.remove)
    handle = torch.nn.modules.module.register_module_forward_hook(done, always_call=True)
    patches.call(handle.remove)
    # torch.compile(module) warns about global hooks; these two only take notes.
    quiet = _quiet(_GLOBAL_HOOKS_WARNING)
    quiet.__enter__()
    patches.call(lambda: quiet.__exit__(None, None, None))


def _eval_graph(mode: RecorderMode, module: torch.nn.Module, output: Any) -> None:
    """A top-level model called in eval mode with gradients on that returned a graph:
    note it by the line of the call, with the eval() that switched the mode."""
    fn = output.grad_fn if isinstance(output, torch.Tensor) else None
    if fn is None:
        return
    events = mode.events
    line = mode.outer_line
    count, eval_line, keys = events.eval_graphs.get(line, (0, None, ()))
    if eval_line is None and id(module) in mode.evals:
        eval_line = mode.evals[id(module)][1]
    if len(keys) < 16:
        keys = (*keys, (fn.name(), fn._sequence_nr()))
    if count or len(events.eval_graphs) < 100:
        events.eval_graphs[line] = EvalGraphs(count + 1, eval_line, keys)


_MODULE_HOOKS = SharedPatches(_module_hooks)
_CREATION_HOOK = node_creation_hook()
_probing = threading.local()


def _node_created(node: Any) -> None:
    sink = getattr(_probing, "sink", None)
    if sink is not None:
        sink.append(node)
        return
    modes = MODES.here()
    if modes and modes[0].hooked:  # the outermost recording of the thread
        modes[0].created(node)


def _node_hook(patches: Patches) -> None:
    assert _CREATION_HOOK is not None
    context = _CREATION_HOOK(_node_created)
    context.__enter__()
    patches.call(lambda: context.__exit__(None, None, None))


_NODE_HOOK = SharedPatches(_node_hook)


def _node_hook_fires_here() -> bool:
    """Whether the shared node-creation hook sees nodes made in this thread: torch does
    not document whether its hook is per thread; if it is, a recording in a thread other
    than the one that installed it walks down from each call's results instead (the 2.13
    way), which finds the same nodes, only slower."""
    sink: list[Any] = []
    _probing.sink = sink
    try:
        with torch.enable_grad(), torch._C.DisableTorchFunction():
            torch.zeros((), requires_grad=True).mul(1)
    except Exception:  # noqa: BLE001  (then walk)
        return False
    finally:
        _probing.sink = None
    return bool(sink)
