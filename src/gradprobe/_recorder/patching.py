"""What gradprobe's patches (:mod:`gradprobe._recorder_patches`) note into a recording
besides torch calls: ``eval()``/``train()`` calls and the optimizer steps that then update
modules in eval mode, and tensor hooks that write to the gradient they are given.
"""

from __future__ import annotations

import contextlib
import functools
import weakref
from typing import TYPE_CHECKING, Any

import torch

from gradprobe._compat import OVERLAPPING_WRITE_ERROR
from gradprobe._recorder.events import (
    _MAX_EVENTS,
    EvalModeStep,
    Events,
    HookWrite,
    SourceLine,
)
from gradprobe._recorder.frames import _user_line, user_stack
from gradprobe._recorder.lines import _inplace_line
from gradprobe._recorder.tensors import _version
from gradprobe._source import is_user_file
from gradprobe.errors import error_text

if TYPE_CHECKING:
    from gradprobe._recorder.mode import RecorderMode


def _note_mode(mode: RecorderMode, module: torch.nn.Module, on: Any, frame: Any) -> None:
    """Note an eval() the user called on ``module`` itself; forget it at their train()."""
    # Step out of this module's own eval()/train() (an override calling super().train()).
    while (
        frame is not None
        and frame.f_code.co_name in ("train", "eval")
        and frame.f_locals.get("self") is module
    ):
        frame = frame.f_back
    if frame is None or not is_user_file(frame.f_code.co_filename):
        return  # passed down by a parent's train(): not asked for this module by name
    if on:
        mode.evals.pop(id(module), None)
        if len(mode.train_lines) < _MAX_EVENTS:
            mode.train_lines[id(module)] = _user_line(frame)
    elif id(module) not in mode.evals and len(mode.evals) < _MAX_EVENTS:
        stack = user_stack(frame)
        line = stack[-1] if stack else None
        mode.evals[id(module)] = (weakref.ref(module), line, mode.events.steps, stack)


def _stepped_evals(mode: RecorderMode, stepped: set[int], caller: Any) -> None:
    """At an optimizer step (called from ``caller``): eval()'d modules whose parameters it
    updates with gradients (GP111), and those of them still in eval mode after training in
    train mode (GP131), with who called that eval() and this step."""
    events = mode.events
    step_stack: tuple[SourceLine, ...] | None = None
    for ident, (ref, line, steps_before, eval_stack) in list(mode.evals.items()):
        module = ref()
        if module is None:
            del mode.evals[ident]
            continue
        if ident in events.eval_trained and (
            ident in events.eval_mode_steps or module.training or not steps_before
        ):
            continue
        if any(id(p) in stepped for p in module.parameters()):
            events.eval_trained.setdefault(ident, line)
            if not module.training and steps_before:
                if step_stack is None:
                    step_stack = user_stack(caller)
                events.eval_mode_steps[ident] = EvalModeStep(
                    line, mode.train_lines.get(ident), eval_stack, step_stack
                )


def _writes_watched(hook: Any, name: str, events: Events) -> Any:
    """``hook`` wrapped to notice it writing to the gradient it is given (GP309): the
    gradient's version moves, or the write fails on an expanded gradient."""
    from gradprobe._patch import WRAPPED_ATTR

    def watched(grad: Any) -> Any:
        version = _version(grad) if isinstance(grad, torch.Tensor) else None
        try:
            result = hook(grad)
        except RuntimeError as error:
            if _OVERLAP in error_text(error):
                _note_hook_write(events, name, hook, error.__traceback__)
            raise
        if version is not None and _version(grad) != version:
            _note_hook_write(events, name, hook, None)
        return result

    with contextlib.suppress(AttributeError, TypeError):
        functools.update_wrapper(watched, hook)
    setattr(watched, WRAPPED_ATTR, hook)
    setattr(watched, _WATCHED, True)
    return watched


_WATCHED = "__gradprobe_watched__"


_OVERLAP = OVERLAPPING_WRITE_ERROR


def _note_hook_write(events: Events, name: str, hook: Any, tb: Any) -> None:
    if name in events.hook_writes or len(events.hook_writes) >= 10:
        return
    line: SourceLine | None = None
    failed = tb is not None
    code = getattr(hook, "__code__", None)
    while tb is not None:  # the failing line inside the hook
        if tb.tb_frame.f_code is code:
            line = (code.co_filename, tb.tb_lineno, code.co_name)
        tb = tb.tb_next
    events.hook_writes[name] = HookWrite(line or _inplace_line(hook), failed)
