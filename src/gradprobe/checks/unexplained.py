"""After an error, never "nothing wrong": an escaped exception no other check explained
becomes GP168. When it is one of torch's errors that the catalogue explains in words
(:mod:`gradprobe.checks._catalogue`, entries with a ``meaning``), the finding says what it
means and what to change; otherwise what was raised and where. The line to change comes from
the traceback's shape (:func:`gradprobe.checks._blame.blame`), from the recording where the
traceback does not show it: the line that made the autograd node torch's message names
(``... of AddmmBackward0``), or for entries blamed on ``"made"``, the line that made the
tensor the raising line passes to torch.

Runs last (after :mod:`gradprobe.checks.errors`), and only when no finding so far points at
the error. The user's own ``raise`` or ``assert`` is left alone: their check fired, and
``gradprobe diagnose`` says it found no autograd problem behind it.

An error a DataLoader worker process raised comes back as torch's "Caught ... in DataLoader
worker process N" with the worker's traceback as text: the finding explains the worker's own
message and names the user's code the worker ran (:mod:`gradprobe.checks._workers`).

Threads the recorded code started are not recorded (NOTE [threads] in
:mod:`gradprobe._threads`), but their errors are not lost: an exception that ends such a
thread is explained from its text and traceback (:func:`explain_error`, else GP168) and the
finding says plainly that the thread ran unrecorded.
"""

from __future__ import annotations

import importlib
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import replace
from types import FrameType

import torch

from gradprobe._patch import Patches
from gradprobe._recorder import SourceLine
from gradprobe._source import shown_file
from gradprobe.checks._api import Check, Run, register
from gradprobe.checks._blame import (
    blame,
    function_line,
    hook_return_line,
    missing_method_line,
    named_values,
    provenance,
    raised_by_torch,
    running_function,
    traceback_frame,
)
from gradprobe.checks._blame_members import graph_hook_line, member_line
from gradprobe.checks._catalogue import CATALOGUE, Entry, worded_entry
from gradprobe.checks._common import _locations
from gradprobe.checks._errortext import explain_error, worded_finding
from gradprobe.checks._workers import dataset_return, worker_error
from gradprobe.errors import GradprobeError, error_text
from gradprobe.findings import Finding, make_finding

__all__ = ["UnexplainedError"]

# a node named in torch's text: "output 0 of AddmmBackward0", "Function MulBackward0 returned"
_NODE = re.compile(r"\b([A-Z]\w*Backward\d*)\b")
_OTHER_PROCESS: tuple[type[BaseException], ...] = tuple(
    kind
    for kind in (
        getattr(torch.distributed, "DistError", None),
        getattr(importlib.import_module("torch.multiprocessing.spawn"), "ProcessException", None),
    )
    if isinstance(kind, type)
)
_EXPLAINING = frozenset(entry.code for entry in CATALOGUE if entry.kind == "error")
_HOW = {
    "made": "where the tensor the call was given was made",
    "plain": "where the tensor the call was given was made",
    "argument": "where the argument the call was given was built",
    "function": "what the function the call was given returns",
    "empty": "where the empty collection the call was given was built",
    "view": "where the view the call was given was taken",
    "gradcheck": "an input too coarse for finite differences, else the backward it checked",
    "ctx": "the call on ctx in the forward of the Function the call applied",
    "member": "the member of the Function's class torch refused",
    "returns": "what the custom Function's method returned",
    "registered": "the earlier registration on the same object",
    "pack": "the pack hook of the saved_tensors_hooks block",
}


_QUOTED = re.compile(r"'([\w:.]+)'")
_BACKWARD = re.compile(r"Backward\d*$")
_TEXT_CHARS = 300  # of the message, in the finding (a torch text can run to pages)


@register
class UnexplainedError(Check):
    """Every escaped error gets a finding (GP168) when nothing else explained it."""

    name = "gradprobe.errors.unexplained"
    codes = ("GP168",)

    def __init__(self) -> None:
        self._patches = Patches()
        self._threads: list[Finding] = []  # errors that ended threads started while recording

    def start(self, run: Run) -> None:
        before = {thread.ident for thread in threading.enumerate()}
        passed_on = threading.excepthook
        patches = self._patches

        def excepthook(args: threading.ExceptHookArgs) -> None:
            thread = args.thread
            if (
                patches.targets()
                and isinstance(args.exc_value, Exception)
                and thread is not None
                and thread.ident not in before
            ):
                self._threads.append(_thread_finding(run, thread.name, args.exc_value))
            passed_on(args)

        patches.set(threading, "excepthook", excepthook)

    def stop(self) -> None:
        self._patches.undo()

    def conclude(self, run: Run) -> Iterable[Finding]:
        found, self._threads = self._threads, []
        return found

    def on_error(self, run: Run, found: Sequence[Finding]) -> Iterable[Finding]:
        error = run.error
        if (
            not isinstance(error, Exception)
            or _reported_elsewhere(error)
            or any(_about_error(f) for f in found)
        ):
            return ()
        traced = blame(error.__traceback__)
        if traced.own_raise and not traced.in_backward:
            return ()  # the user's own raise or assert: diagnose says no autograd problem
        finding = _finding(run, error)
        if finding.cause is None and _in_process_group():
            return ()  # a collective that failed with no line of its own: a peer died
        return (finding,)


def _thread_finding(run: Run, thread: str, error: Exception) -> Finding:
    """An error that ended an unrecorded thread, explained from what it carries."""
    explained = explain_error(error)
    finding = explained if explained is not None else _finding(run, error)
    unrecorded = (
        f"In thread {thread!r}, which gradprobe did not record (only the thread that entered "
        "the recording is; this comes from the error's text and traceback alone): "
    )
    return replace(finding, message=unrecorded + finding.message)


def _reported_elsewhere(error: Exception) -> bool:
    """Errors whose explanation is elsewhere: gradprobe's own (an assertion of
    gradprobe.testing carries its findings) and those that report another process's failure
    (a rank that died, a spawned worker's exception: that process's recording has the cause)."""
    if isinstance(error, GradprobeError):
        return True
    return isinstance(error, _OTHER_PROCESS)


def _in_process_group() -> bool:
    """A rank of a distributed run: its peers' reports carry their own errors."""
    distributed = torch.distributed
    return bool(distributed.is_available() and distributed.is_initialized())


def _about_error(finding: Finding) -> bool:
    """A finding that explains the error: one of the catalogue's codes, or one naming the
    line the error surfaced at."""
    return finding.code in _EXPLAINING or any(loc.role == "error" for loc in finding.locations)


def _finding(run: Run, error: Exception) -> Finding:
    text = _text(error)
    entry = worded_entry(text) if raised_by_torch(error) else None
    found = blame(error.__traceback__)
    cause, how = found.cause, found.how
    if not found.in_backward and not raised_by_torch(error):
        # Python itself refused (an attribute of None, a wrong type): the line shows where,
        # not what to change
        cause, how = None, ""
    frame = traceback_frame(error.__traceback__, found.error) if found.error else None
    worker = worker_error(text) if raised_by_torch(error) else None
    if worker is not None:  # the worker's own message and code, read from its traceback
        text = f"{worker.message} (in a DataLoader worker process, unrecorded)"
        entry = worded_entry(worker.inner_text)
        made = worker.user_line()
        if made is None and frame is not None and found.error is not None:
            made = dataset_return(frame, found.error[1])
        cause, how = (made, "the code the DataLoader worker ran") if made else (cause, how)
    elif entry is not None and frame is not None and found.error is not None:
        cause, how = _entry_cause(run, error, entry, frame, found.error[1], text) or (cause, how)
    if cause is None and found.in_backward and not found.own_raise:
        cause, how = _running(run, error, entry)
    if cause is None and found.in_backward and not found.own_raise:
        cause = _named_node_line(run, text, quoted=entry is not None and entry.blame == "node")
        how = "the line that made the node torch's message names" if cause else how
    locations = _locations((cause, "cause"), (found.error, "error"))
    if found.error is not None and found.error == cause and len(locations) == 1:
        locations = [*locations, *_locations((found.error, "error"))]
    kind = type(error).__qualname__
    first = text.splitlines()[0][:_TEXT_CHARS] if text else ""
    where = _shown(found.error) if found.error is not None else "outside your code"
    details = {"exception": kind, "text": text[:_TEXT_CHARS], "cause_from": how or None}
    if entry is not None:
        return worded_finding(entry, text, locations, details)
    return make_finding(
        "GP168",
        message=f"{kind} at {where}: {first}" + (f" ({how})" if how else ""),
        details={**details, "entry": None},
        locations=locations,
    )


def _entry_cause(
    run: Run, error: Exception, entry: Entry, frame: FrameType, line: int, text: str
) -> tuple[SourceLine, str] | None:
    """The line ``entry``'s blame rule names for ``error`` raised at ``line`` of ``frame``."""
    made: SourceLine | None
    if entry.blame == "hook":
        made = hook_return_line(error.__traceback__) or graph_hook_line(frame, line, text)
        made = made or _only_tensor_hook(run)
        return (made, "what the hook returned") if made else None
    if entry.blame == "lazy":
        made = _lazy_layer(run, frame, line)
        return (made, "where the lazy layer was made") if made else None
    if entry.blame == "backward":
        made = _last_backward(run)
        return (made, "the backward() the refused call came after") if made else None
    made = provenance(entry.blame, frame, line, run.events.nodes)
    return (made, _HOW.get(entry.blame.partition(":")[0], "")) if made else None


def _lazy_layer(run: Run, frame: FrameType, line: int) -> SourceLine | None:
    """Where the first lazy layer (parameters not yet made) of a model named on ``line`` of
    ``frame`` was made, as the recording saw its ``__init__``."""
    uninitialized = torch.nn.parameter.UninitializedParameter
    for model in named_values(frame, line):
        if not isinstance(model, torch.nn.Module):
            continue
        for module in model.modules():
            if any(isinstance(p, uninitialized) for p in module.parameters(recurse=False)):
                made: SourceLine | None = run.events.module_lines.get(id(module))
                if made is not None:
                    return made
    return None


def _last_backward(run: Run) -> SourceLine | None:
    """The line of the latest backward() the recording saw."""
    for event in reversed(run.events.backwards):
        if event.line is not None:
            line: SourceLine = event.line
            return line
    return None


def _only_tensor_hook(run: Run) -> SourceLine | None:
    """The return of the one tensor hook registered while recording (torch's C++ runs tensor
    hooks, so no traceback shows which one returned what it refused); None with several."""
    hooks = list(run.events.tensor_hooks.values())
    if len(hooks) != 1:
        return None
    line: SourceLine | None = hooks[0].returns or hooks[0].registered
    return line


def _running(run: Run, error: BaseException, entry: Entry | None) -> tuple[SourceLine | None, str]:
    """For an error torch raised inside the backward of a Python Function (no user frame in
    it: torch's own checkpoint, or a Function with no backward): the Function's class when it
    lacks its backward, else the line that called it in the forward."""
    node = running_function(error.__traceback__)
    if node is None:
        return None, ""
    if entry is not None and entry.blame == "method":
        line = missing_method_line(node)
        return line, "the Function's class, where its backward belongs" if line else ""
    if entry is not None and entry.blame.startswith("member:"):
        line = member_line(node._forward_cls, entry.blame.partition(":")[2])
        return line, "the member of the Function's class torch refused" if line else ""
    line = function_line(node, run.events.applied, run.events.nodes)
    return line, "the call of the Function that backward() was running" if line else ""


def _named_node_line(run: Run, text: str, *, quoted: bool) -> SourceLine | None:
    """The latest recorded node torch's text names: ``MulBackward0`` as such, or (for
    entries blamed on ``"node"``) an op quoted in it, ``'zeta'`` for ``SpecialZetaBackward0``."""
    nodes = run.events.nodes
    if not nodes:
        return None
    names = [(name, True) for name in _NODE.findall(text)]
    if quoted:
        names += [(_squash(name), False) for name in _QUOTED.findall(text)]
    for name, exact in names:
        for record in reversed(nodes.values()):
            op = record.op if exact else _squash(_BACKWARD.sub("", record.op))
            if record.line is not None and (op == name if exact else name and name in op):
                line: SourceLine = record.line
                return line
    return None


def _squash(name: str) -> str:
    return name.lower().replace("_", "").removeprefix("aten::")


def _shown(line: SourceLine) -> str:
    return f"{shown_file(line[0])}:{line[1]}"


def _text(error: BaseException) -> str:
    return error_text(error, f"<{type(error).__qualname__} whose str() raised>")
