"""Global switches are scoped (invariant 5): a switch a function sets for its own work and
leaves set when it returns, so that later training runs under it (GP174).

=====================================  ===================================================
switch left set by a helper            the training work that then depends on it
=====================================  ===================================================
``model.eval()`` in a validation       an optimizer step updating that module in eval mode
helper                                 (Dropout off, BatchNorm frozen) after it trained
``torch.set_grad_enabled(False)``      a ``backward()`` of a loss computed with gradients
called as a function                   off (no graph reaches the parameters)
``torch.no_grad().__enter__()`` (or    the same: the context is entered by hand, and
``inference_mode``'s) never exited     nothing calls its ``__exit__``
``torch.set_default_dtype(bfloat16)``  an optimizer step on parameters made in that
in a loader                            low precision, whose small updates round away
``torch.set_default_dtype(float64)``   a layer made after it meeting float32 data: the
in a class or helper                   dtype-mismatch error (read at the error)
=====================================  ===================================================

The recorder notes each plain call that sets a switch with the user's frames of the call
(a ``with`` block or a decorator restores the switch and is not noted), and the frames of
the step or backward that meets the switch still set. A switch counts when the first
function of the setting call's frames that the work's frames do not share returned with it
set (:func:`~gradprobe.checks._common.left_set_by`). The line to change is the unscoped call
itself for the grad mode and the default dtype (it becomes a ``with`` block, or a restore in
a ``finally:``), however deep in the helper's callees it sits; for ``eval()``, whose undo is
a ``train()`` in the function that meant it for a while, it is that function's line.
A switch set in the function that does the work is set there on purpose (a frozen
BatchNorm kept in eval mode, ``set_default_dtype(torch.float64)`` at the top of a
scientific script) or is the loop's own order, which GP131 reads; it is not named here.

Cheap: one look at the grad mode per ``backward()``, at the default dtype per step, and a
walk of the stack only when a switch is found still set.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType

import torch

from gradprobe._recorder import SourceLine, _grad_fn
from gradprobe._recorder.events import EvalModeStep, Stack, SwitchSet
from gradprobe._recorder.frames import user_stack
from gradprobe._recorder.switches import DEFAULT_DTYPE, GRAD
from gradprobe._source import is_user_file
from gradprobe.checks._api import BackwardCall, Check, Run, StepCall, register
from gradprobe.checks._common import _locations, _top_modules, _where, left_set_by
from gradprobe.checks.modes import reads_training
from gradprobe.errors import error_text
from gradprobe.findings import Finding, make_finding

__all__ = ["LeftSwitches"]

# torch's names of the floating dtypes in its messages ("... but got Float and Double")
_SCALAR_NAMES = {
    torch.float64: "Double",
    torch.float32: "Float",
    torch.float16: "Half",
    torch.bfloat16: "BFloat16",
}

# default dtypes whose rounding eats an optimizer's small updates (float64 only costs time)
_LOW_PRECISION = (torch.float16, torch.bfloat16)


@register
class LeftSwitches(Check):
    """A switch set by a helper that returned without restoring it, met by training (GP174)."""

    name = "gradprobe.switches.left_switches"
    codes = ("GP174",)
    reads_modules = True

    def __init__(self) -> None:
        self.grad_named = False
        self.dtype_named = False
        self.evals_named: set[SourceLine] = set()

    def on_backward(self, call: BackwardCall) -> Iterable[Finding]:
        if self.grad_named or torch.is_grad_enabled():
            return ()
        switch = call.run.events.switches.get(GRAD)
        if switch is None or switch.value != "False" or not switch.stack:
            return ()
        if all(_grad_fn(root) is not None for root in call.roots):
            return ()  # its graph was built with gradients on (under enable_grad())
        self.grad_named = True
        work = user_stack(sys._getframe(1))
        return (_grad_left_off(switch, work),)

    def on_step(self, step: StepCall) -> Iterable[Finding]:
        if self.dtype_named:
            return ()
        default = torch.get_default_dtype()
        if default not in _LOW_PRECISION:
            return ()
        switch = step.run.events.switches.get(DEFAULT_DTYPE)
        if switch is None or switch.value != str(default):
            return ()
        low = [
            p
            for group in step.optimizer.param_groups
            for p in group["params"]
            if p.dtype == default and p.requires_grad
        ]
        if not low:
            return ()
        work = user_stack(sys._getframe(1))
        helper = left_set_by(switch.stack, work)
        if helper is None:
            return ()  # set where the training runs: low-precision training on purpose
        self.dtype_named = True
        return (_dtype_left_set(switch.stack, helper, work, default, len(low)),)

    def on_error(self, run: Run, found: Sequence[Finding]) -> Iterable[Finding]:
        error = run.error
        switch = run.events.switches.get(DEFAULT_DTYPE)
        # the latest plain call's value, not the default now: a script run in-process has
        # its default put back before the error is read
        default = getattr(torch, switch.value.removeprefix("torch."), None) if switch else None
        if (
            self.dtype_named
            or switch is None
            or not isinstance(error, RuntimeError)
            or not isinstance(default, torch.dtype)
            or default == torch.float32
            or any(loc.role == "error" for f in found for loc in f.locations)
            or not _mismatch(error_text(error), default)
        ):
            return ()
        work = _traceback_stack(error.__traceback__)
        helper = left_set_by(_from(switch.stack, work), work)
        if helper is None:
            return ()  # set where the failing work runs: that precision is meant there
        self.dtype_named = True
        return (_dtype_mismatch(switch.stack, helper, work, default),)

    def conclude(self, run: Run) -> Iterable[Finding]:
        left: dict[SourceLine, list[tuple[str, EvalModeStep]]] = {}
        names = _module_names(run.modules)
        for ident, stepped in run.events.eval_mode_steps.items():
            helper = left_set_by(stepped.eval_stack, stepped.step_stack)
            named = names.get(ident)
            if helper is None or named is None or helper in self.evals_named:
                continue
            name, module = named
            if any(reads_training(m) for m in module.modules()):
                left.setdefault(helper, []).append((name, stepped))
        self.evals_named.update(left)
        return [_eval_left_on(helper, parts) for helper, parts in left.items()]


def _module_names(modules: Iterable[torch.nn.Module]) -> dict[int, tuple[str, torch.nn.Module]]:
    """id -> (its name in its model, or the model's class for a whole model; the module)."""
    names: dict[int, tuple[str, torch.nn.Module]] = {}
    for top in _top_modules(modules):
        for name, module in top.named_modules():
            names.setdefault(id(module), (name or type(top).__name__, module))
    return names


def _in(line: SourceLine) -> str:
    """``"in evaluate() (utils/evaluation.py)"``: the function and file of a line."""
    return f"in {line[2]}() ({Path(line[0]).name})"


def _grad_left_off(switch: SwitchSet, work: Stack) -> Finding:
    made = switch.stack
    helper = left_set_by(made, work)
    backward = work[-1] if work else None
    how = switch.call or "torch.set_grad_enabled(False)"
    returned = f", and it was still off after {helper[2]}() returned" if helper is not None else ""
    return make_finding(
        "GP174",
        message=(
            f"{how} at {_where(made[-1])}, {_in(made[-1])}, turned gradients off for the "
            "whole process: called as a function, not as a `with` block, nothing turns "
            f"them back on{returned}. The backward() at {_where(backward)} then ran on a "
            "loss computed with gradients off, which no graph connects to the parameters: "
            "none of them gets a gradient."
        ),
        hint=(
            "Use `with torch.no_grad():` around the evaluation (or decorate the function "
            "with @torch.no_grad()), so gradients come back on when it ends."
        ),
        # the line to change is the unscoped call itself, however deep the helper sits
        locations=_locations(
            (made[-1], "cause"), (_unless(helper, made[-1]), "read"), (backward, "error")
        ),
        details={"switch": "grad_mode", "set_in": made[-1][2]},
    )


def _dtype_left_set(
    made: Stack, helper: SourceLine, work: Stack, dtype: torch.dtype, count: int
) -> Finding:
    step = work[-1] if work else None
    shown = str(dtype).removeprefix("torch.")
    return make_finding(
        "GP174",
        message=(
            f"torch.set_default_dtype({dtype}) at {_where(made[-1])}, {_in(made[-1])}, "
            f"changed the default dtype of the whole process, and {helper[2]}() returned "
            f"without setting it back: every tensor and layer made after it is {shown}. The "
            f"optimizer step at {_where(step)} updates {_count(count, 'parameter')} in "
            f"{shown}, whose rounding swallows updates smaller than about "
            f"{'0.4' if dtype == torch.bfloat16 else '0.05'}% of a weight: most steps change "
            "nothing."
        ),
        hint=(
            "Put the previous default back before returning: `previous = "
            "torch.get_default_dtype()`, then `torch.set_default_dtype(previous)` in a "
            "`finally:`; or build that part in float32 and convert it with .to(dtype)."
        ),
        locations=_locations(
            (helper, "cause"), (_unless(made[-1], helper), "read"), (step, "read")
        ),
        details={"switch": "default_dtype", "dtype": shown, "parameters": count},
    )


def _dtype_mismatch(made: Stack, helper: SourceLine, work: Stack, dtype: torch.dtype) -> Finding:
    failed = work[-1] if work else None
    shown = str(dtype).removeprefix("torch.")
    return make_finding(
        "GP174",
        message=(
            f"torch.set_default_dtype({dtype}) at {_where(made[-1])}, {_in(made[-1])}, "
            f"changed the default dtype of the whole process, and {helper[2]}() returned "
            f"without setting it back: layers and tensors made after it are {shown}. The "
            f"call at {_where(failed)} then met them with tensors of another dtype and "
            "failed."
        ),
        hint=(
            "Put the previous default back before returning: `previous = "
            "torch.get_default_dtype()`, then `torch.set_default_dtype(previous)` in a "
            "`finally:`; or pass dtype= where that precision is needed."
        ),
        locations=_locations(
            (made[-1], "cause"), (_unless(helper, made[-1]), "read"), (failed, "error")
        ),
        details={"switch": "default_dtype", "dtype": shown},
    )


def _mismatch(text: str, dtype: torch.dtype) -> bool:
    """Whether torch's message is about two dtypes meeting, one of them ``dtype``: "mat1 and
    mat2 must have the same dtype, but got Float and Double", "expected scalar type Double
    but found Float"."""
    name = _SCALAR_NAMES.get(dtype)
    if name is None or ("dtype" not in text and "scalar type" not in text):
        return False
    named = set(re.findall(r"\b(Double|Float|Half|BFloat16)\b", text))
    return name in named and len(named) > 1


def _from(made: Stack, work: Stack) -> Stack:
    """``made`` from the outermost function a traceback's ``work`` starts in: a traceback
    holds only the frames below the code that caught it (the runner of the script)."""
    if work:
        for i, line in enumerate(made):
            if (line[0], line[2]) == (work[0][0], work[0][2]):
                return made[i:]
    return made


def _traceback_stack(tb: TracebackType | None) -> Stack:
    """The user's frames of a traceback, outermost first, at the lines it passed through."""
    lines: list[SourceLine] = []
    while tb is not None:
        code = tb.tb_frame.f_code
        if is_user_file(code.co_filename):
            lines.append((code.co_filename, tb.tb_lineno, code.co_name))
        tb = tb.tb_next
    return tuple(lines)


def _eval_left_on(helper: SourceLine, parts: list[tuple[str, EvalModeStep]]) -> Finding:
    names = [name for name, _ in parts]
    stepped = parts[0][1]
    made = stepped.eval_stack[-1]
    step = stepped.step_stack[-1] if stepped.step_stack else None
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return make_finding(
        "GP174",
        message=(
            f"eval() at {_where(made)}, {_in(made)}, switched {shown} to eval mode, and "
            f"{helper[2]}() returned without switching back: the optimizer step at "
            f"{_where(step)}{', ' + _in(step) if step else ''}, then trained "
            f"{'it' if len(names) == 1 else 'them'} in eval mode (Dropout off, BatchNorm "
            "using and no longer updating its running statistics), and so did every step "
            "until the next train()."
        ),
        hint=(
            f"Switch back to train mode before {helper[2]}() returns, or call "
            "model.train() right after calling it in the training loop."
        ),
        module=names[0],
        locations=_locations((helper, "cause"), (_unless(made, helper), "read"), (step, "read")),
        details={"switch": "train_mode", "modules": names},
    )


def _unless(line: SourceLine | None, cause: SourceLine) -> SourceLine | None:
    """``line`` as context, unless it is the cause itself (the switch set in the helper)."""
    return None if line == cause else line


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
