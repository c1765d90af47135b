"""The user's traceback stays theirs: the frames gradprobe put into an exception passing
through it are taken out again where gradprobe lets it go on, and where it came from is
read off its frames, never off its words.

NOTE [interposed frames]
While a recording runs, a user's call into torch can pass through frames that plain torch
never shows (measured on torch 2.13 and 2.14, Python 3.11):

==========================================  =================================================
frame                                       why it is there
==========================================  =================================================
``torch/_tensor.py`` ``backward``, line     a torch function written in Python (Tensor.backward,
of ``return handle_torch_function(...)``    ``F.relu``) first hands itself to the active mode;
                                            the mode calls it again, and that second entry is
                                            the one plain torch shows
``torch/overrides.py``                      ``handle_torch_function`` calls the mode
``handle_torch_function``
``torch/_dynamo/eval_frame.py`` ``_fn``     ``torch._dynamo.disable`` wraps the mode's
                                            ``__torch_function__`` and record()'s hooks so
                                            compiled code runs them eagerly
``gradprobe/_recorder/mode.py``,            the mode's ``__torch_function__`` and the mixin
``_recorder/backward.py``, ...              that handles the call (``_backward``)
``gradprobe/_recorder_patches.py``          wrappers of patched torch functions
                                            (``Module.__init__``, ``Optimizer.zero_grad``)
gradprobe's hooks                           forward hooks, tensor-hook wrappers torch calls
==========================================  =================================================

:func:`user_traceback` rebuilds the traceback without them (``tb_next`` surgery through
``with_traceback``; the exception object, its type, args and message are not touched):

- a run of gradprobe frames is taken out when torch called into it (a hook, the mode's
  dispatch) or when its first frame only passes calls on (the recorder's files and its
  patches, :func:`gradprobe._recorder.passes_calls_on`, or a wrapper that sets
  ``__tracebackhide__ = True``, such as watch()'s of ``torch.autograd.grad``), and the
  error did not start there
  (a run that ends the traceback stays when its last frame raised the error itself: a
  ``GradprobeError`` is gradprobe's to show);
- the torch wrappers right before such a run (``overrides.py``, ``_dynamo/eval_frame.py``)
  go with it, and so does the dispatching entry before them when the call re-entered the
  same code after the run;
- a frame that re-entered itself through gradprobe (a ``with`` block whose ``__exit__``
  re-raised) keeps only its inner entry, the line that raised;
- otherwise the first entry (the frame gradprobe hands the exception back to) stays.

Frames the user's own modes, subclasses and hooks add, and torch's own frames
(``torch/_tensor.py``, ``torch/autograd/__init__.py``, ``graph.py``) stay.

One more pair is torch's own but there because of gradprobe: ``Module._call_impl`` calls
``forward`` on its fast path (one frame, the line ``return forward_call(*args,
**kwargs)``) unless some hook is registered, and record() and watch() register module
hooks: then it goes through ``return inner()`` and the nested ``inner``. When every hook
in the way is gradprobe's (the module's own and the global ones), the two entries become
the fast path's one again (:func:`_fast_module_call`).
"""

from __future__ import annotations

import contextlib
import dis
import inspect
import os
import sys
from collections.abc import Collection, Iterator
from types import CodeType, TracebackType

import torch

from gradprobe._source import is_gradprobe_file

__all__ = ["raised_in_torch", "user_traceback"]

_TORCH_DIR = os.path.dirname(os.path.realpath(torch.__file__)) + os.sep  # noqa: PTH120
# torch's frames that exist only to hand a call to a mode or to run it eagerly
_WRAPPERS = tuple(
    _TORCH_DIR + os.path.join(*parts)  # noqa: PTH118
    for parts in (("overrides.py",), ("_dynamo", "eval_frame.py"))
)
# the instructions that raise in the frame itself; any other one raised in C code it ran
_RAISES = frozenset(dis.opmap[name] for name in ("RAISE_VARARGS", "RERAISE") if name in dis.opmap)

_kinds: dict[str, str] = {}


def _kind(code: CodeType) -> str:
    """``"gradprobe"``, ``"wrapper"``, ``"torch"`` or ``"other"`` for a frame's code."""
    if _is_relay(code):
        return "gradprobe"
    filename = code.co_filename
    kind = _kinds.get(filename)
    if kind is None:
        real = os.path.realpath(filename) if filename and not filename.startswith("<") else ""
        if real and is_gradprobe_file(real):
            kind = "gradprobe"
        elif real.startswith(_WRAPPERS):
            kind = "wrapper"
        elif real.startswith(_TORCH_DIR):
            kind = "torch"
        else:
            kind = "other"
        _kinds[filename] = kind
    return kind


def _entries(tb: TracebackType | None) -> list[TracebackType]:
    found = []
    while tb is not None:
        found.append(tb)
        tb = tb.tb_next
    return found


def _raised_here(entry: TracebackType) -> bool:
    """Whether the frame's own ``raise`` made the error (not C code one of its
    instructions ran: a torch function, a tensor's attribute setter, an operator)."""
    code = entry.tb_frame.f_code.co_code
    lasti = entry.tb_lasti
    return 0 <= lasti < len(code) and code[lasti] in _RAISES


def _is_relay(code: CodeType) -> bool:
    """A call the recorder made from the caller's line (NOTE [calls made from the caller's
    line] in :mod:`gradprobe._recorder.frames`); none before the recorder is imported."""
    frames = sys.modules.get("gradprobe._recorder.frames")
    return frames is not None and bool(frames.is_relay(code))


def _passing_on() -> Collection[str]:
    """The files whose frames only pass a torch call on (the recorder's, its patches');
    none can be in a traceback before the recorder is imported."""
    frames = sys.modules.get("gradprobe._recorder.frames")
    passing: Collection[str] = getattr(frames, "_PASSING_ON", ())
    return passing


def _runs(kinds: list[str]) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each run of gradprobe entries after the first entry."""
    index = 1
    while index < len(kinds):
        if kinds[index] != "gradprobe":
            index += 1
            continue
        end = index
        while end + 1 < len(kinds) and kinds[end + 1] == "gradprobe":
            end += 1
        yield index, end
        index = end + 1


def _dropped(entries: list[TracebackType]) -> set[int]:
    """The indexes of the entries gradprobe put there (NOTE [interposed frames])."""
    kinds = [_kind(entry.tb_frame.f_code) for entry in entries]
    last = len(entries) - 1
    drop: set[int] = set()
    for start, end in _runs(kinds):
        if end == last and _raised_here(entries[end]):
            continue  # gradprobe raised it: its frames show where
        before = start - 1
        while before > 0 and kinds[before] == "wrapper":
            before -= 1
        entered_from_torch = kinds[start - 1] == "wrapper" or kinds[before] == "torch"
        first = entries[start].tb_frame
        passing_on = (
            first.f_code.co_filename in _passing_on()
            or first.f_locals.get("__tracebackhide__") is True  # a wrapper that says so
        )
        reentered = (
            end < last and before >= 0 and entries[end + 1].tb_frame is entries[before].tb_frame
        )
        if not (entered_from_torch or passing_on or reentered):
            continue  # the user called gradprobe (a helper that runs their function)
        drop.update(range(before + 1, end + 1))
        if end < last:
            after = entries[end + 1].tb_frame
            outer = entries[before].tb_frame
            dispatched = before > 0 and any(
                entries[i].tb_frame.f_code.co_name == "handle_torch_function"
                for i in range(before + 1, start)
            )
            if after is outer or (dispatched and after.f_code is outer.f_code):
                drop.add(before)  # the same call, entered again: keep the inner entry
    return drop


def _clean(error: BaseException) -> None:
    entries = _entries(error.__traceback__)
    drop = _dropped(entries) if len(entries) > 1 else set()
    fast = _fast_module_calls(entries, drop)
    if not drop and not fast:
        return
    rebuilt: TracebackType | None = None
    for index in range(len(entries) - 1, -1, -1):
        if index in drop:
            continue
        entry = entries[index]
        lasti, lineno = fast.get(index, (entry.tb_lasti, entry.tb_lineno))
        rebuilt = TracebackType(rebuilt, entry.tb_frame, lasti, lineno)
    error.with_traceback(rebuilt)


_CALL_IMPL = torch.nn.Module._call_impl.__code__


def _fast_path() -> tuple[int, int] | None:
    """``(offset, line)`` of ``Module._call_impl``'s fast-path call of ``forward``: its
    first ``CALL_FUNCTION_EX`` (torch 2.13, 2.14); None if the code looks otherwise."""
    for instruction in dis.get_instructions(_CALL_IMPL):
        if instruction.opname == "CALL_FUNCTION_EX":
            line = instruction.positions.lineno if instruction.positions else None
            return None if line is None else (instruction.offset, line)
    return None


_FAST_PATH = _fast_path()


def _fast_module_calls(entries: list[TracebackType], drop: set[int]) -> dict[int, tuple[int, int]]:
    """The ``_call_impl`` entries that would be the fast path's without gradprobe's hooks:
    index -> (lasti, line); their ``inner`` entries join ``drop``."""
    fast: dict[int, tuple[int, int]] = {}
    if _FAST_PATH is None:
        return fast
    for index in range(len(entries) - 2):
        outer, inner = entries[index].tb_frame, entries[index + 1].tb_frame
        if (
            outer.f_code is _CALL_IMPL
            and inner.f_code.co_name == "inner"
            and inner.f_back is outer
            and inner.f_code.co_filename == _CALL_IMPL.co_filename
            and _only_our_hooks(outer.f_locals.get("self"))
        ):
            fast[index] = _FAST_PATH
            drop.add(index + 1)
    return fast


def _only_our_hooks(module: object) -> bool:
    """Whether every hook that sends ``module``'s call off its fast path is gradprobe's."""
    if not isinstance(module, torch.nn.Module):
        return False
    from torch.nn.modules import module as torch_module

    tables = [
        getattr(module, name, {})
        for name in (
            "_backward_hooks",
            "_backward_pre_hooks",
            "_forward_hooks",
            "_forward_pre_hooks",
        )
    ]
    tables += [
        getattr(torch_module, name, {})
        for name in (
            "_global_backward_pre_hooks",
            "_global_backward_hooks",
            "_global_forward_hooks",
            "_global_forward_pre_hooks",
        )
    ]
    hooks = [hook for table in tables for hook in table.values()]
    return bool(hooks) and all(_is_ours(hook) for hook in hooks)


def _is_ours(hook: object) -> bool:
    target = inspect.unwrap(hook) if callable(hook) else hook  # dynamo.disable's wrapper
    target = getattr(target, "__func__", target)  # a bound method
    code = getattr(target, "__code__", None)
    return isinstance(code, CodeType) and _kind(code) == "gradprobe"


def user_traceback(error: BaseException) -> BaseException:
    """``error`` itself, its traceback (and those of its cause, context and group members)
    without the frames gradprobe put there (NOTE [interposed frames]). Never raises."""
    pending: list[BaseException] = [error]
    seen: set[int] = set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        with contextlib.suppress(Exception):  # a traceback left as it was is still true
            _clean(current)
        pending.extend(
            linked
            for linked in (current.__cause__, current.__context__)
            if isinstance(linked, BaseException)
        )
        members = getattr(current, "exceptions", None)  # an ExceptionGroup (3.11+)
        if isinstance(members, tuple):
            pending.extend(member for member in members if isinstance(member, BaseException))
    return error


def raised_in_torch(error: BaseException) -> bool:
    """Whether torch raised ``error``: its innermost frame is torch's, or it came out of C
    code a frame ran (a torch function the user, or gradprobe's mode on their behalf,
    called; a tensor's attribute setter) rather than from that frame's own ``raise``.
    False without a traceback: where it came from is unknown."""
    entries = _entries(error.__traceback__)
    if not entries:
        return False
    innermost = entries[-1]
    if _kind(innermost.tb_frame.f_code) == "torch":
        return True
    return not _raised_here(innermost)
