"""torch errors of the error catalogue that the recording explains with lines, not only
with words (:mod:`gradprobe.checks._errortable` has the words): the output behind a
``backward(gradient)`` that does not fit or a complex loss (GP149, GP150), the
``@once_differentiable`` a double backward reached (GP153), the checkpointed function whose
recomputation differed (GP155), the in-place write behind a view or leaf error raised later
(GP124, GP102), and the ``DistributedDataParallel`` line behind DDP's errors (GP163, GP164).
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import threading
from collections.abc import Iterable, Sequence
from types import FrameType, TracebackType
from typing import Any

import torch

from gradprobe._compat import (
    BATCHED_GRAD_SHAPE_ERROR,
    CHECKPOINT_MISMATCH_ERROR,
    COMPLEX_IMPLICIT_ERROR,
    DDP_READY_TWICE_ERROR,
    DDP_UNFINISHED_REDUCTION_ERROR,
    GRAD_OUTPUT_SHAPE_ERROR,
    LEAF_INPLACE_ERROR,
    ONCE_DIFFERENTIABLE_ERROR,
    SAVE_NON_TENSOR_ERROR,
    VIEW_INPLACE_ERROR,
    checkpoint_generator_names,
)
from gradprobe._patch import Patches, SharedPatches
from gradprobe._recorder import Backward, Events, SourceLine
from gradprobe._source import is_user_file, traceback_location, user_frame
from gradprobe.checks._api import BackwardCall, Check, Run, register
from gradprobe.checks._blame import made_line
from gradprobe.checks._common import _locations, _where
from gradprobe.checks._errortable import explain_plain
from gradprobe.checks._impure import impure_line
from gradprobe.errors import error_text
from gradprobe.findings import Finding, make_finding

_MAX_CHECKPOINTS = 64

__all__ = [
    "BackwardArguments",
    "DistributedErrors",
    "SavedNonTensor",
    "WriteBeforeUse",
    "grad_without_graph",
]


@register
class BackwardArguments(Check):
    """A backward that failed on what it was given or what it reached: a gradient of the
    wrong shape (GP149), a complex loss (GP150), a ``@once_differentiable`` backward
    differentiated again (GP153), a checkpoint whose recomputation differed (GP155)."""

    name = "gradprobe.raised.backward_arguments"
    codes = ("GP149", "GP150", "GP153", "GP155")

    def __init__(self) -> None:
        # non-reentrant checkpoints called while recording: (where, the function's def line)
        self.checkpoints: list[tuple[SourceLine | None, SourceLine | None]] = []
        self._thread: int | None = None

    def start(self, run: Run) -> None:
        """Note each non-reentrant ``checkpoint(fn, ...)`` this thread makes: a
        recomputation that differs is reported at ``fn``. One shared patch serves every
        recording (NOTE [shared patches] in gradprobe._patch)."""
        thread = threading.get_ident()
        with _CHECKPOINTS.locked():
            _LISTENERS.setdefault(thread, []).append(self.checkpoints)
        self._thread = thread
        _CHECKPOINTS.acquire()

    def stop(self) -> None:
        thread, self._thread = self._thread, None
        if thread is None:
            return
        with _CHECKPOINTS.locked():
            mine = _LISTENERS.get(thread, [])
            for index, seen in enumerate(mine):
                if seen is self.checkpoints:
                    del mine[index]
                    break
            if not mine:
                _LISTENERS.pop(thread, None)
        _CHECKPOINTS.release()

    def on_backward_error(self, call: BackwardCall) -> Iterable[Finding]:
        text = "" if call.error is None else error_text(call.error)
        events, event = call.run.events, call.event
        plain = explain_plain(text)
        if plain is None:
            return ()
        code, words = plain
        made = _root_line(events, event)
        if GRAD_OUTPUT_SHAPE_ERROR.search(text) or BATCHED_GRAD_SHAPE_ERROR.search(text):
            where = f" The output was made at {_where(made)}." if made else ""
            # a gradient made on a line of its own (`basis = torch.eye(2)`) is changed there
            given = _given_gradient(events)
            return (
                make_finding(
                    code,
                    message=words + where,
                    locations=_locations((given or event.line, "cause"), (made, "created")),
                ),
            )
        if COMPLEX_IMPLICIT_ERROR.search(text):
            return (
                make_finding(
                    code,
                    message=f"{words} The complex value was made at {_where(made)}.",
                    locations=_locations((made or event.line, "cause"), (event.line, "error")),
                ),
            )
        if ONCE_DIFFERENTIABLE_ERROR in text:
            marked = _once_differentiable(events)
            if marked is None:
                return ()
            name, line = marked
            return (
                make_finding(
                    code,
                    message=(
                        f"{words} The Function is {name}; its backward is marked at "
                        f"{_where(line)}, and the second backward runs at "
                        f"{_where(event.line)}."
                    ),
                    locations=_locations((line, "cause"), (event.line, "error")),
                    details={"function": name},
                ),
            )
        if CHECKPOINT_MISMATCH_ERROR.search(text):
            if not self.checkpoints or self.checkpoints[-1][1] is None:
                return ()
            called, recomputed = self.checkpoints[-1]
            assert recomputed is not None
            differs = impure_line(recomputed)
            why = f" It runs differently the second time from {_where(differs)}." if differs else ""
            return (
                make_finding(
                    code,
                    message=(
                        f"{words} The checkpointed function is {recomputed[2]}(), defined at "
                        f"{_where(recomputed)} and checkpointed at {_where(called)}; the "
                        f"backward at {_where(event.line)} recomputed it.{why}"
                    ),
                    locations=_locations((differs or recomputed, "cause"), (event.line, "error")),
                    details={"function": recomputed[2]},
                ),
            )
        return ()


def _given_gradient(events: Events) -> SourceLine | None:
    """Where the gradient handed to the failing backward()/autograd.grad was made, when the
    call names it (a tensor that requires no grad) rather than building it inline."""
    frame = user_frame()
    if frame is None:
        return None
    return made_line(frame, frame.f_lineno, lambda tensor: not tensor.requires_grad, events.nodes)


@register
class WriteBeforeUse(Check):
    """Errors torch raises where a tensor is used, about an in-place write made earlier:
    a view whose base was written (GP124), a leaf an in-place op moved into the graph
    (GP102). The write is the line to change; where torch raised is the ``error``."""

    name = "gradprobe.raised.write_before_use"
    codes = ("GP102", "GP124")

    def on_error(self, run: Run, found: Sequence[Finding]) -> Iterable[Finding]:
        if not isinstance(run.error, RuntimeError):
            return ()
        text = error_text(run.error)
        view = VIEW_INPLACE_ERROR.search(text)
        leaf = LEAF_INPLACE_ERROR.search(text)
        if view is not None and view["base"]:
            code = "GP124"
        elif leaf is not None and leaf.group(0).startswith("leaf variable has been moved"):
            code = "GP102"
        else:
            return ()
        if any(finding.code == code for finding in found):
            return ()
        error = traceback_location(run.error.__traceback__)
        writes = [
            write
            for write in run.events.writes
            if write.requires_grad
            and write.grad_enabled
            and not write.in_optimizer
            and write.line is not None
            and (error is None or (write.line[0], write.line[1]) != (error.file, error.line))
        ]
        if not writes:
            return ()
        write = writes[-1]
        what = (
            f"Output {view['output']} of {view['function']} is one of several views returned "
            "by one call (split, chunk, unbind); its base"
            if code == "GP124" and view is not None
            else "A tensor that was a leaf (requires_grad switched off, then on again by an "
            "in-place op with a tensor that requires grad)"
        )
        return (
            make_finding(
                code,
                message=(
                    f"{what} was written in place by {write.op} at {_where(write.line)}, and "
                    f"the tensor was used afterwards at "
                    f"{'line ' + str(error.line) if error else 'a later line'}, where torch "
                    "raised. Make that write out of place (y = y + 1), or write before "
                    "taking the views."
                ),
                locations=(
                    *_locations((write.line, "cause")),
                    *((error,) if error is not None else ()),
                ),
            ),
        )


@register
class DistributedErrors(Check):
    """DistributedDataParallel's reducer errors, at the line that wrapped the model:
    parameters without a gradient (GP163), a gradient produced twice (GP164)."""

    name = "gradprobe.raised.distributed"
    codes = ("GP163", "GP164")

    def on_error(self, run: Run, found: Sequence[Finding]) -> Iterable[Finding]:
        if not isinstance(run.error, RuntimeError):
            return ()
        text = error_text(run.error)
        if DDP_UNFINISHED_REDUCTION_ERROR in text:
            code = "GP163"
        elif DDP_READY_TWICE_ERROR in text:
            code = "GP164"
        else:
            return ()
        wrapper = next((m for m in run.modules if _is_ddp(m)), None)
        if wrapper is None:
            return ()
        line = run.events.module_lines.get(id(wrapper))
        plain = explain_plain(text)
        words = plain[1] if plain else ""
        unused: list[str] = []
        owners: list[SourceLine | None] = []  # where the modules holding them were made
        if code == "GP163":
            inner = getattr(wrapper, "module", wrapper)
            for prefix, module in inner.named_modules():
                mine = [
                    f"{prefix}.{name}" if prefix else name
                    for name, p in module.named_parameters(recurse=False)
                    if p.requires_grad and p.grad is None
                ]
                if mine:
                    unused += mine
                    owners.append(run.events.module_lines.get(id(module)))
        named = f" Without a gradient: {', '.join(unused[:6])}." if unused else ""
        error = traceback_location(run.error.__traceback__)
        # the unused layers are what to change (use them, drop them, or tell DDP about
        # them at the wrapper); with none found, the wrapper line
        causes = [line for line in owners[:2] if line is not None] or [line]
        twice = _marked_twice(run.events) if code == "GP164" else None
        if twice is not None:
            causes, named = list(twice[0]), f" {twice[1]}"
        return (
            make_finding(
                code,
                message=(
                    f"{words} The model was wrapped at {_where(line)}"
                    + (" (find_unused_parameters=True goes there)." if unused else ".")
                    + named
                ),
                locations=(
                    *_locations(*((cause, "cause") for cause in causes)),
                    *((error,) if error is not None else ()),
                ),
                details={"unused": unused} if code == "GP163" else None,
            ),
        )


def _marked_twice(events: Events) -> tuple[list[SourceLine], str] | None:
    """Why DDP saw one parameter's gradient twice in one backward: a reentrant checkpoint
    (its backward runs the block's backward again, inside the outer one) at the checkpoint
    call; several backward passes through one forward (retain_graph=True) at the backward
    that ran again."""
    reentrant = list(dict.fromkeys(l for k, l in events.applied.items() if k[0] in _REENTRANT))
    if reentrant:
        return reentrant[-2:], (
            "A reentrant checkpoint runs the backward of its block again inside the outer "
            "backward, so DDP sees those parameters ready twice: pass use_reentrant=False."
        )
    calls = list(events.backwards)
    if len(calls) >= 2 and calls[-2].retain_graph and calls[-1].line is not None:
        return [calls[-1].line], (
            "This backward ran through a graph an earlier backward (retain_graph=True) already "
            "went through since the last forward: sum the losses and call backward() once."
        )
    return None


_REENTRANT = frozenset(["CheckpointFunctionBackward"])


def grad_without_graph(events: Events) -> Backward | None:
    """The ``autograd.grad`` call whose results a failing backward started from: the last
    call before it, made without ``create_graph=True`` (so without a graph of its own;
    ``retain_graph`` defaults to ``create_graph``), when it did not fail."""
    calls = list(events.backwards)
    if len(calls) < 2:
        return None
    previous = calls[-2]
    if previous.op != "grad" or previous.retain_graph or previous.error is not None:
        return None
    return previous


# -- helpers ------------------------------------------------------------------------------


def _is_ddp(module: object) -> bool:
    return any(cls.__name__ == "DistributedDataParallel" for cls in type(module).__mro__)


def _root_line(events: Events, event: Backward) -> SourceLine | None:
    for key in event.roots:
        record = events.nodes.get(key) if key is not None else None
        if record is not None and record.line is not None:
            return record.line
    return None


def _once_differentiable(events: Events) -> tuple[str, SourceLine] | None:
    """A custom Function applied while recording whose backward is decorated with
    ``@once_differentiable``, and the decorator's line."""
    for function in events.custom_functions.values():
        if function.backward is None:
            continue
        file, number, name = function.backward
        above = number - 1
        while above > 0:
            text = linecache.getline(file, above).strip()
            if not text.startswith("@"):
                break
            if "once_differentiable" in text:
                return function.name, (file, above, name)
            above -= 1
    return None


_Seen = list[tuple[SourceLine | None, SourceLine | None]]
# thread -> the lists of the BackwardArguments checks recording in it
_LISTENERS: dict[int, list[_Seen]] = {}


def _noting(original: Any) -> Any:
    """``original`` (a checkpoint generator taking the user's function first), noting
    where it was called from and that function's ``def`` line for the recordings of the
    calling thread."""

    @functools.wraps(original)
    def noting(fn: Any, *args: Any, **kwargs: Any) -> Any:
        listeners = _LISTENERS.get(threading.get_ident())
        if listeners:
            note = (_frame_line(user_frame(2)), _function_def(fn))
            for seen in listeners:
                if len(seen) < _MAX_CHECKPOINTS and note not in seen:
                    seen.append(note)
        return original(fn, *args, **kwargs)

    return noting


def _install_checkpoints(patches: Patches) -> None:
    from torch.utils import checkpoint as module

    for name in checkpoint_generator_names():
        patches.set(module, name, _noting(getattr(module, name)))


_CHECKPOINTS = SharedPatches(_install_checkpoints)


def _frame_line(frame: FrameType | None) -> SourceLine | None:
    if frame is None:
        return None
    return (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)


def _function_def(fn: Any) -> SourceLine | None:
    """The ``def`` line of what a checkpoint runs: a function, a partial of one, or a
    module's ``forward``; None when it is not the user's code."""
    target = getattr(fn, "func", fn)  # functools.partial
    if isinstance(target, torch.nn.Module):
        target = type(target).forward
    code = getattr(inspect.unwrap(target), "__code__", None)
    if code is None or not is_user_file(code.co_filename):
        return None
    for number in range(code.co_firstlineno, code.co_firstlineno + 20):
        if linecache.getline(code.co_filename, number).lstrip().startswith(("def ", "async def")):
            return (code.co_filename, number, code.co_name)
    return (code.co_filename, code.co_firstlineno, code.co_name)


@register
class SavedNonTensor(Check):
    """``ctx.save_for_backward`` given a number or a flag (GP152): torch raises after the
    Function's forward returned, at the ``apply`` line; the line to change is the
    ``save_for_backward`` call in that forward."""

    name = "gradprobe.raised.saved_non_tensor"
    codes = ("GP152",)

    def on_error(self, run: Run, found: Sequence[Finding]) -> Iterable[Finding]:
        if not isinstance(run.error, TypeError):
            return ()
        text = error_text(run.error)
        if SAVE_NON_TENSOR_ERROR.search(text) is None:
            return ()
        error = traceback_location(run.error.__traceback__)
        # torch raises once forward returned, in apply: the class is the one the failing
        # line applies (the recorder notes a Function only after apply returned)
        cls = _applied_class(run.error.__traceback__)
        forward = getattr(cls, "forward", None)
        saved = _save_call(forward) if forward is not None else None
        if cls is None or saved is None:
            return ()
        name = cls.__name__
        plain = explain_plain(text)
        return (
            make_finding(
                "GP152",
                message=(
                    f"{plain[1] if plain else ''} The call is in {name}.forward at "
                    f"{_where(saved)}; torch raised when {name}.apply returned."
                ),
                locations=(
                    *_locations((saved, "cause")),
                    *((error,) if error is not None else ()),
                ),
                details={"function": name},
            ),
        )


def _applied_class(tb: TracebackType | None) -> type | None:
    """The Function class the innermost user line of ``tb`` applies (``Scale.apply(...)``),
    looked up by name in that frame; None when the line applies none."""
    frame = None
    while tb is not None:
        if is_user_file(tb.tb_frame.f_code.co_filename):
            frame, number = tb.tb_frame, tb.tb_lineno
        tb = tb.tb_next
    if frame is None:
        return None
    try:
        tree = ast.parse(linecache.getline(frame.f_code.co_filename, number).strip())
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "apply":
            found = _lookup(node.value, frame)
            if isinstance(found, type) and issubclass(found, torch.autograd.Function):
                return found
    return None


def _lookup(node: ast.expr, frame: FrameType) -> object:
    """The object a name or a dotted name refers to in ``frame`` (no code is run)."""
    if isinstance(node, ast.Name):
        if node.id in frame.f_locals:
            return frame.f_locals[node.id]
        return frame.f_globals.get(node.id, frame.f_builtins.get(node.id))
    if isinstance(node, ast.Attribute):
        owner = _lookup(node.value, frame)
        return inspect.getattr_static(owner, node.attr, None) if owner is not None else None
    return None


def _save_call(forward: Any) -> SourceLine | None:
    """The ``ctx.save_for_backward(...)`` line in a custom Function's ``forward``."""
    code = getattr(inspect.unwrap(forward), "__code__", None)
    if code is None or not is_user_file(code.co_filename):
        return None
    try:
        tree = ast.parse("".join(linecache.getlines(code.co_filename)))
    except (SyntaxError, ValueError):
        return None
    for method in ast.walk(tree):
        if isinstance(method, ast.FunctionDef) and method.name == code.co_name:
            if not code.co_firstlineno <= method.lineno <= code.co_firstlineno + 20:
                continue
            for node in ast.walk(method):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "save_for_backward"
                ):
                    return (code.co_filename, node.lineno, "forward")
    return None
