"""torch.compile: module hooks dynamo never sees (GP501), graph breaks with their reason
and line (GP502), and what a recording of a compiled model does not observe (GP503).

Facts these checks stand on, measured on torch 2.13 with the ``eager`` and ``aot_eager``
backends (``docs/compile.md`` shows them):

* dynamo compiles a module's hook dictionaries into its guards only when they are not
  empty. A forward, forward-pre, full backward, full backward-pre or legacy backward hook
  added to a module whose dictionary of that kind was empty when the compiled model first
  ran is never called by later calls that reuse the compiled code (no recompile:
  ``torch._dynamo.config.skip_nnmodule_hook_guards`` is True by default). A hook added to
  a dictionary that already held one is noticed (recompile). ``torch._dynamo.reset()`` or a
  recompile for another reason (new input shapes) picks the hook up. Tensor hooks and
  post-accumulate-grad hooks on parameters do fire: they run in autograd, outside the
  compiled forward.
* every graph break dynamo takes is appended to ``torch._dynamo.utils.graph_break_reasons``
  (the records ``torch._dynamo.explain()`` reports), with its reason and the user's stack;
  reading that list re-runs nothing.
* while ``record()`` runs, its recorder mode and module hooks are ``torch.compiler.disable``'d,
  so dynamo breaks the graph at each of them and runs the compiled model op by op: what a
  recording sees of a compiled model is its eager behaviour, and a late hook is called
  there (fresh compile) although a normal run skips it.

The tracker watches three things while recording: calls of ``OptimizedModule``
(``torch.compile(module)``), where handles of hooks are made (``RemovableHandle``), and
``torch.compile`` / ``torch._dynamo.reset`` calls. It never imports ``torch._dynamo``: the
patches that need it are installed when it is already loaded, or as soon as
``torch.compile`` returns.
"""

from __future__ import annotations

import contextlib
import functools
import re
import sys
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.utils.hooks import RemovableHandle

from gradprobe._compat import resumed_name
from gradprobe._patch import Patches, SharedPatches
from gradprobe._source import is_user_file, user_frame
from gradprobe._threads import ThreadBound
from gradprobe.checks._api import Check, Run, register
from gradprobe.checks._common import _locations
from gradprobe.findings import Finding, make_finding

__all__ = ["CompiledModels", "is_gradprobe_break"]

Line = tuple[str, int, str]

# A module's hook dictionaries dynamo guards on when they are not empty, and their names.
_HOOK_TABLES: tuple[tuple[str, str], ...] = (
    ("_forward_pre_hooks", "forward pre"),
    ("_forward_hooks", "forward"),
    ("_backward_pre_hooks", "full backward pre"),
    ("_backward_hooks", "backward"),
)
_MAX_LATE = 200  # late registrations remembered per recording
_MAX_BREAKS = 10  # graph-break findings per recording


@dataclass
class _Compiled:
    """One ``torch.compile(module)`` wrapper called while recording."""

    ref: weakref.ref[torch.nn.Module]
    label: str  # "Net"
    created: Line | None  # the torch.compile(...) line, when it ran while recording
    backend: str | None
    calls: int = 0
    snapshot: bool = False  # hook tables read at its first call (since the last reset)
    # (training, input shapes) of the calls since the last reset: what dynamo compiled for
    signatures: set[Any] = field(default_factory=set)


@dataclass
class _Late:
    """A hook registered on an empty hook table of a module inside a compiled model that
    had already run."""

    compiled: int  # id of the OptimizedModule
    module: str  # "fc1 (Linear)"
    kind: str
    table: weakref.ref[Any]
    handle: int
    line: Line | None
    reset: int  # the tracker's reset count when it was registered
    compiled_for: frozenset[Any] = frozenset()  # the signatures compiled before it
    missed: int = 0  # later calls of the compiled model that ran without it
    stale: bool = True  # no call has recompiled since it was registered


@dataclass
class _Tracker:
    """What one recording learnt about compiled models (per-recording state)."""

    compiled: dict[int, _Compiled] = field(default_factory=dict)
    created: dict[int, tuple[Line | None, str | None]] = field(default_factory=dict)
    # id(hook table) -> (compiled id, module label, kind, weak ref to the table)
    tables: dict[int, tuple[int, str, str, weakref.ref[Any]]] = field(default_factory=dict)
    late: list[_Late] = field(default_factory=list)
    resets: int = 0
    breaks: list[Any] = field(default_factory=list)  # GraphCompileReason harvested at resets
    mark: int = 0  # len(graph_break_reasons) at the start (or the last reset)
    captured: int = 0  # counters["stats"]["calls_captured"] at the start
    frames: int = 0  # counters["frames"]["total"] at the start: frames dynamo compiled
    # torch.compile(function) results made while recording: (name, line, backend)
    functions: list[tuple[str, Line | None, str | None]] = field(default_factory=list)

    # -- events --------------------------------------------------------------------------

    def compiled_call(self, wrapper: torch.nn.Module, args: Any, kwargs: Any) -> None:
        key = id(wrapper)
        entry = self.compiled.get(key)
        if entry is None or entry.ref() is not wrapper:
            line, backend = self.created.get(key, (None, None))
            original = getattr(wrapper, "_orig_mod", wrapper)
            entry = _Compiled(weakref.ref(wrapper), type(original).__name__, line, backend)
            self.compiled[key] = entry
        signature = _signature(wrapper, args, kwargs)
        for late in self.late:
            if late.compiled != key or late.reset != self.resets or not late.stale:
                continue
            if signature not in late.compiled_for:
                # a train/eval switch or new input shapes: dynamo recompiles, and the fresh
                # code calls the hook from then on
                late.stale = False
            elif _attached(late):
                late.missed += 1
        entry.signatures.add(signature)
        entry.calls += 1
        if not entry.snapshot:
            entry.snapshot = True
            self._snapshot(key, wrapper)

    def _snapshot(self, key: int, wrapper: torch.nn.Module) -> None:
        """The hook tables dynamo will compile without a guard: the empty ones."""
        original = getattr(wrapper, "_orig_mod", None)
        if not isinstance(original, torch.nn.Module):
            return
        for path, module in original.named_modules():
            label = (
                f"{path} ({type(module).__name__})" if path else f"the model ({self.label(key)})"
            )
            for attr, kind in _HOOK_TABLES:
                table = getattr(module, attr, None)
                if isinstance(table, dict) and not table:
                    with contextlib.suppress(TypeError):
                        self.tables[id(table)] = (key, label, kind, weakref.ref(table))

    def label(self, key: int) -> str:
        entry = self.compiled.get(key)
        return entry.label if entry is not None else "module"

    def handle_made(self, table: Any, handle: int) -> None:
        known = self.tables.get(id(table))
        if known is None or known[3]() is not table or len(self.late) >= _MAX_LATE:
            return
        if not _hook_guards_skipped():
            return
        key, module, kind, ref = known
        frame = user_frame(1)
        line = (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name) if frame else None
        entry = self.compiled.get(key)
        before = frozenset(entry.signatures) if entry is not None else frozenset()
        self.late.append(_Late(key, module, kind, ref, handle, line, self.resets, before))

    def reset(self) -> None:
        """``torch._dynamo.reset()``: compiled code is dropped, the next call recompiles
        (and sees every hook); it also empties dynamo's graph-break list."""
        self.breaks.extend(_new_breaks(self.mark))
        self.mark = 0
        self.resets += 1
        self.tables.clear()
        for entry in self.compiled.values():
            entry.snapshot = False
            entry.signatures.clear()


def _signature(wrapper: torch.nn.Module, args: Any, kwargs: Any) -> Any:
    """What decides whether dynamo reuses compiled code, roughly: the train/eval mode and
    the shapes of the tensor arguments (its guards check both)."""
    shapes = tuple(
        tuple(value.shape) if isinstance(value, torch.Tensor) else None
        for value in (*args, *kwargs.values())
    )
    return (bool(wrapper.training), shapes)


def _attached(late: _Late) -> bool:
    table = late.table()
    return table is not None and late.handle in table


def _hook_guards_skipped() -> bool:
    dynamo = sys.modules.get("torch._dynamo")
    config = getattr(dynamo, "config", None)
    return bool(getattr(config, "skip_nnmodule_hook_guards", True))


def _new_breaks(mark: int) -> list[Any]:
    utils = sys.modules.get("torch._dynamo.utils")
    reasons = getattr(utils, "graph_break_reasons", None)
    if not isinstance(reasons, list):
        return []
    return list(reasons[mark:] if len(reasons) >= mark else reasons)


def _break_count() -> int:
    utils = sys.modules.get("torch._dynamo.utils")
    reasons = getattr(utils, "graph_break_reasons", None)
    return len(reasons) if isinstance(reasons, list) else 0


def _captured(group: str = "stats", name: str = "calls_captured") -> int:
    utils = sys.modules.get("torch._dynamo.utils")
    counters = getattr(utils, "counters", None)
    if counters is None:
        return 0
    with contextlib.suppress(Exception):
        return int(counters[group][name])
    return 0


# -- the shared patches (NOTE [shared patches], NOTE [threads]) -----------------------------

_TRACKERS: ThreadBound[_Tracker] = ThreadBound()
_DYNAMO_PATCHED: list[bool] = [False]


def _compiling() -> bool:
    compiler = getattr(torch, "compiler", None)
    return bool(compiler is not None and compiler.is_compiling())


def _install(patches: Patches) -> None:
    _DYNAMO_PATCHED[0] = False
    patches.call(lambda: _DYNAMO_PATCHED.__setitem__(0, False))
    patches.set(RemovableHandle, "__init__", _handle_init(RemovableHandle.__init__))
    patches.set(torch, "compile", _compile(torch.compile))
    if "torch._dynamo" in sys.modules:
        _patch_dynamo(patches)


def _patch_dynamo(patches: Patches) -> None:
    """Patch what lives in ``torch._dynamo`` (already imported by the caller)."""
    if _DYNAMO_PATCHED[0]:
        return
    dynamo = sys.modules["torch._dynamo"]
    optimized = dynamo.eval_frame.OptimizedModule
    _DYNAMO_PATCHED[0] = True
    patches.set(optimized, "__call__", _optimized_call(optimized.__call__))
    patches.set(dynamo, "reset", _reset(dynamo.reset))


_SHARED = SharedPatches(_install)


def _handle_init(original: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(original)
    def __init__(self: RemovableHandle, hooks_dict: Any, *args: Any, **kwargs: Any) -> None:
        original(self, hooks_dict, *args, **kwargs)
        # checked first: dynamo traces this when a hook is registered in compiled code
        if not _compiling():
            for tracker in _TRACKERS.here():
                with contextlib.suppress(Exception):
                    tracker.handle_made(hooks_dict, self.id)

    return __init__


def _compile(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def compile(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        trackers = _TRACKERS.here()
        if trackers:
            with contextlib.suppress(Exception):
                frame = user_frame(2)
                line = (
                    (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
                    if frame is not None
                    else None
                )
                backend = kwargs.get("backend", "inductor")
                name = backend if isinstance(backend, str) else getattr(backend, "__name__", None)
                for tracker in trackers:
                    tracker.created[id(result)] = (line, name)
                    if not isinstance(result, torch.nn.Module) and args and callable(args[0]):
                        function = getattr(args[0], "__qualname__", type(args[0]).__name__)
                        if len(tracker.functions) < 20:
                            tracker.functions.append((str(function), line, name))
                if "torch._dynamo" in sys.modules:
                    with _SHARED.locked():
                        if _SHARED.installed:
                            _patch_dynamo(_SHARED.patches)
        return result

    return compile


def _optimized_call(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def __call__(self: torch.nn.Module, *args: Any, **kwargs: Any) -> Any:
        if not _compiling():  # a compiled model called inside another compiled function
            for tracker in _TRACKERS.here():
                with contextlib.suppress(Exception):
                    tracker.compiled_call(self, args, kwargs)
        return original(self, *args, **kwargs)

    return __call__


def _reset(original: Callable[[], None]) -> Callable[[], None]:
    @functools.wraps(original)
    def reset() -> None:
        for tracker in _TRACKERS.here():
            with contextlib.suppress(Exception):
                tracker.reset()
        original()

    return reset


def _start(tracker: _Tracker) -> Any:
    tracker.mark = _break_count()
    tracker.captured = _captured()
    tracker.frames = _captured("frames", "total")
    _SHARED.acquire()
    return _TRACKERS.add(tracker)


def _stop(tracker: _Tracker, holder: Any) -> None:
    with contextlib.suppress(Exception):
        _TRACKERS.remove(holder, tracker)
    with contextlib.suppress(Exception):
        _SHARED.release()


# -- the checks -----------------------------------------------------------------------------


@register
class CompiledModels(Check):
    """GP501 (hooks registered after the compiled model ran), GP502 (graph breaks) and
    GP503 (what the recording did not see of compiled models)."""

    name = "gradprobe.compiled"
    codes = ("GP501", "GP502", "GP503")

    def __init__(self) -> None:
        self.tracker = _Tracker()
        self._holder: Any = None

    def start(self, run: Run) -> None:
        self._holder = _start(self.tracker)

    def stop(self) -> None:
        if self._holder is not None:
            holder, self._holder = self._holder, None
            _stop(self.tracker, holder)

    def conclude(self, run: Run) -> Iterable[Finding]:
        tracker = self.tracker
        found = late_hook_findings(tracker)
        found.extend(graph_break_findings([*tracker.breaks, *_new_breaks(tracker.mark)]))
        found.extend(
            region_findings(
                tracker,
                _captured() - tracker.captured,
                _captured("frames", "total") - tracker.frames,
            )
        )
        return found


def late_hook_findings(tracker: _Tracker) -> list[Finding]:
    """One GP501 per registering line and module that later calls of the compiled model
    ran without."""
    found: list[Finding] = []
    seen: set[tuple[Line | None, str, str]] = set()
    for late in tracker.late:
        key = (late.line, late.module, late.kind)
        if not late.missed or key in seen:
            continue
        seen.add(key)
        entry = tracker.compiled.get(late.compiled)
        label = entry.label if entry is not None else "model"
        created = entry.created if entry is not None else None
        where = f" (torch.compile at line {created[1]})" if created else ""
        calls = "call" if late.missed == 1 else "calls"
        found.append(
            make_finding(
                "GP501",
                message=(
                    f"The {late.kind} hook on {late.module} was registered after the compiled "
                    f"{label}{where} had already run. dynamo compiled that module without "
                    "hooks of this kind and does not check for new ones "
                    "(torch._dynamo.config.skip_nnmodule_hook_guards): the "
                    f"{late.missed} later {calls} with the same train/eval mode and input "
                    "shapes reused that code and never called the hook, and nothing raised. "
                    "Only a recompile (new shapes, a mode switch) picks it up. gradprobe "
                    "recording runs the model op by op, so there the hook does run; this "
                    "describes a normal run."
                ),
                module=late.module,
                locations=_locations((late.line, "cause"), (created, "created")),
                details={"hook_kind": late.kind, "calls_without_hook": late.missed},
            )
        )
    return found


_GB_PAGE = re.compile(r"/gb/(gb\d+)\.html")
_FUNCTION = re.compile(r"<function ([\w.<>]+) at 0x([0-9a-fA-F]+)>")
_DISABLED = "torch.compiler.disable()"


def is_gradprobe_break(reason: str) -> bool:
    """Whether a graph break is one gradprobe's own instrumentation caused: dynamo meets a
    ``torch.compiler.disable``'d function of gradprobe (its recorder mode, its module hooks,
    ``watch()``'s hooks) and runs it eagerly.

    Example:
        >>> is_gradprobe_break("Skip calling `torch.compiler.disable()`d function\\n"
        ...     "  Explanation: Skip calling function `<function _module_hooks.<locals>.seen"
        ...     " at 0x7f>` since it was wrapped")
        True
    """
    if _DISABLED not in reason.split("\n", 1)[0]:
        return False
    named = _FUNCTION.search(reason)
    if named is None:
        return False
    return named[1].split(".", 1)[0] in _gradprobe_names()


@functools.lru_cache(maxsize=1)
def _gradprobe_names() -> frozenset[str]:
    """The first part of the qualified names of the functions gradprobe hands to
    ``torch.compiler.disable``."""
    return frozenset(
        (
            "RecorderMode",  # gradprobe._recorder.mode: __torch_function__
            "_module_hooks",  # gradprobe._record: seen / done
            "_not_compiled",
            "WatchSession",  # gradprobe._watch.session: its forward hooks
            "_eager_only",
        )
    )


_OWN_DIR = Path(__file__).resolve().parent.parent  # src/gradprobe


def _in_gradprobe(reason: Any) -> bool:
    """Whether dynamo met the break inside gradprobe's code (a patch it traced)."""
    stack = getattr(reason, "user_stack", None) or []
    return any(_OWN_DIR in Path(frame.filename).resolve().parents for frame in stack)


def _user_line(reason: Any) -> Line | None:
    stack = getattr(reason, "user_stack", None) or []
    for frame in reversed(stack):
        if is_user_file(frame.filename):
            return (frame.filename, int(frame.lineno or 0), resumed_name(frame.name))
    return None


def _parts(text: str) -> tuple[str, str, list[str]]:
    """dynamo's reason text: its first line, the explanation and the hints."""
    lines = [line.strip() for line in text.splitlines()]
    first = lines[0] if lines else text
    explanation = next(
        (ln[len("Explanation:") :].strip() for ln in lines if ln.startswith("Explanation:")), ""
    )
    hints = [ln[len("Hint:") :].strip() for ln in lines if ln.startswith("Hint:")]
    return first, explanation, hints


def graph_break_findings(reasons: Iterable[Any]) -> list[Finding]:
    """GP502 for each (reason, user line) among dynamo's graph-break records, gradprobe's
    own left out."""
    grouped: dict[tuple[str, Line | None], list[Any]] = {}
    for reason in reasons:
        text = str(getattr(reason, "reason", ""))
        if not text or is_gradprobe_break(text) or _in_gradprobe(reason):
            continue
        line = _user_line(reason)
        grouped.setdefault((_parts(text)[0], line), []).append(reason)
    found: list[Finding] = []
    for (first, line), group in list(grouped.items())[:_MAX_BREAKS]:
        text = str(group[0].reason)
        _, explanation, hints = _parts(text)
        page = _GB_PAGE.search(text)
        where = f"at line {line[1]} ({line[2]})" if line else "in code outside your files"
        message = f"dynamo broke the compiled graph {where}: {first}."
        if first.startswith("generic_jump"):  # dynamo's words for an if/while on a tensor
            message += " That is a Python branch on a tensor's value."
        if explanation:
            message += f" {explanation}" + ("" if explanation.endswith((".", "!", "?")) else ".")
        message += (
            " The code before and after that point is compiled as separate graphs and the "
            "break itself runs eagerly, every call."
        )
        hint = " ".join(hints) or None
        found.append(
            make_finding(
                "GP502",
                message=message,
                hint=(f"dynamo suggests: {hint}" if hint else None),
                locations=_locations((line, "cause")),
                details={
                    "reason": first,
                    "times": len(group),
                    **({"graph_break_type": page[1]} if page else {}),
                },
            )
        )
    return found


def region_findings(tracker: _Tracker, captured: int, frames: int = 0) -> list[Finding]:
    """One GP503 for the compiled models called while recording (``torch.compile(module)``
    wrappers), or, when only compiled functions ran, for the ``frames`` dynamo compiled."""
    called = [entry for entry in tracker.compiled.values() if entry.calls]
    parts = [
        f"{entry.label} ({entry.calls} call{'s' if entry.calls != 1 else ''}"
        + (f", backend {entry.backend!r}" if entry.backend else "")
        + ")"
        for entry in called[:3]
    ]
    created = [entry.created for entry in called[:3]]
    if not called and frames > 0:
        for function, line, backend in tracker.functions[:3]:
            parts.append(f"{function}" + (f" (backend {backend!r})" if backend else ""))
            created.append(line)
        if not tracker.functions:
            parts.append(f"{frames} Python frames dynamo compiled")
    if not parts:
        return []
    names = ", ".join(parts)
    if captured:
        seen = (
            f"dynamo still captured {captured} operations into compiled graphs; inside "
            "those gradprobe saw no operation, saved tensor or in-place write."
        )
    else:
        seen = (
            "dynamo captured no operation into a compiled graph while recording: gradprobe's "
            "recorder is hidden from dynamo (torch.compiler.disable), so each compiled call "
            "ran op by op and the findings describe the model's eager behaviour."
        )
    return [
        make_finding(
            "GP503",
            message=(
                f"Compiled models ran while recording: {names}. {seen} Not observed: the "
                "compiled program itself (the backend's code, one CompiledFunctionBackward "
                "node per graph, guards and recompiles); and a module hook registered after "
                "the first compiled call runs here, although a normal run skips it (GP501)."
            ),
            locations=_locations(*((line, "created") for line in created)),
            details={"compiled_calls": sum(e.calls for e in called), "captured_ops": captured},
        )
    ]
