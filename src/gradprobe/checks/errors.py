"""What torch's error meant, when no other check explained it with lines: the error's text
alone names the mistake (an in-place write on a leaf, requires_grad on an integer tensor).
Runs after every other check."""

from __future__ import annotations

import linecache
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from types import FrameType, TracebackType

import torch

from gradprobe._pictures import leaf_slice
from gradprobe._source import shown_file
from gradprobe.checks._api import Check, Run, register
from gradprobe.checks._blame import helper_return, made_line
from gradprobe.checks._common import _locations, _top_modules, _where
from gradprobe.checks._errortext import explain_error
from gradprobe.findings import Finding, Location
from gradprobe.hooks._names import frame_variables

__all__ = ["ErrorText"]

# errors raised by the very line to change: an in-place write on a leaf or on a view
# autograd cannot rebase, requires_grad on an integer tensor or on a non-leaf
# (and most of the error catalogue's: a wrong argument, a call made where it cannot be)
_RAISED_AT_CAUSE = frozenset(
    [
        "GP102",
        "GP124",
        "GP125",
        "GP126",
        "GP149",
        "GP151",
        "GP152",
        "GP154",
        "GP156",
        "GP157",
        "GP158",
        "GP159",
        "GP160",
        "GP161",
        "GP162",
    ]
)

# An error explained from its text alone adds nothing when the recording already explained
# it with lines: a version-counter error is GP101, GP109 (an optimizer step) or GP112 (a
# graph carried across iterations); a hooked module's output written in place is GP305.
_EXPLAINS_SAME = {"GP101": {"GP101", "GP109", "GP112"}, "GP124": {"GP124", "GP305"}}


@register
class ErrorText(Check):
    """The escaped error, explained from its text (GP101-GP126 and the error catalogue's
    GP149-GP164, as :func:`explain_error` knows them) when nothing else explained it."""

    name = "gradprobe.errors.error_text"
    codes = (
        *("GP101", "GP102", "GP103", "GP104", "GP105", "GP124", "GP125", "GP126"),
        *(f"GP{n}" for n in range(149, 165)),
    )

    def on_error(self, run: Run, found: Sequence[Finding]) -> Iterable[Finding]:
        if not isinstance(run.error, Exception):
            return ()
        explained = explain_error(run.error)
        if explained is None or explained.code == "GP168":  # the recording blames it better
            return ()
        same = _EXPLAINS_SAME.get(explained.code, {explained.code})
        if any(finding.code in same for finding in found):
            return ()
        if explained.code == "GP126":
            carried = _carried_non_leaf(run, explained)
            if carried is not None:
                return (carried,)
        finding = _with_cause(explained)
        if finding.code == "GP151":
            finding = _input_made(run, finding)
        if finding.code == "GP102":
            finding = _written_leaf(run, finding)
        if finding.code == "GP162":
            finding = _made_half(run, finding)
        if finding.code == "GP125":
            finding = _integer_made(run, finding)
        return (finding,)


def _made_half(run: Run, finding: Finding) -> Finding:
    """GP162 at the line that made the parameters 16-bit (``model.half()``), the refusing
    scaler call as the error, when the recording saw the conversion."""
    made = next((line for line in reversed(run.events.low_precision) if line), None)
    if made is None:
        return finding
    refused = [loc for loc in finding.locations if loc.role == "cause"][:1]
    return replace(
        finding,
        locations=(
            *_locations((made, "cause")),
            *(replace(loc, role="error") for loc in refused),
            *(loc for loc in finding.locations if loc.role not in ("cause", "error")),
        ),
    )


_ASKS_GRAD = re.compile(r"\.requires_grad_\(\s*(?:True)?\s*\)|\.requires_grad\s*=\s*True")


def _integer_made(run: Run, finding: Finding) -> Finding:
    """requires_grad asked of an integer tensor made on an earlier line: that line (or the
    return of the helper of the user's that made it, ``images = load_batch(n)``) chose the
    dtype and is the one to change; the request is the error."""
    cause, error = finding.cause, run.error
    frame = _frame_at(error, cause) if cause is not None and error is not None else None
    if cause is None or frame is None:
        return finding
    if not _ASKS_GRAD.search(linecache.getline(frame.f_code.co_filename, cause.line)):
        return finding
    made = made_line(frame, cause.line, _integer, run.events.nodes)
    if made is None or made[1] == cause.line:
        return finding
    made = helper_return(frame, made) or made
    return replace(
        finding,
        locations=(
            *_locations((made, "cause")),
            *(
                replace(loc, role="error") if loc.role == "cause" else loc
                for loc in finding.locations
            ),
        ),
    )


def _integer(tensor: torch.Tensor) -> bool:
    return not (tensor.is_floating_point() or tensor.is_complex())


def _frame_at(error: BaseException, location: Location) -> FrameType | None:
    frames = [
        tb.tb_frame
        for tb in _traceback(error)
        if tb.tb_lineno == location.line
        and shown_file(tb.tb_frame.f_code.co_filename) == location.file
    ]
    return frames[-1] if frames else None


def _carried_non_leaf(run: Run, finding: Finding) -> Finding | None:
    """requires_grad set on a tensor that an assignment later in the same loop body made
    the result of an op: it was a leaf on the first pass only. The line to change is the
    assignment (``x = (x + step).detach()``)."""
    for flag, made in reversed(run.events.nonleaf_flags):
        if (
            flag is not None
            and made is not None
            and flag[0] == made[0]
            and flag[2] == made[2]
            and made[1] > flag[1]
        ):
            return replace(
                finding,
                message=(
                    f"requires_grad was set at {_where(flag)} on a tensor that was a leaf on "
                    f"the first pass of the loop only: the assignment at {_where(made)} "
                    "replaced it with the result of an operation, whose requires_grad "
                    "follows from its inputs. Detach there to start each pass from a new "
                    "leaf: x = (x + step).detach()."
                ),
                locations=(
                    *_locations((made, "cause"), (flag, "error")),
                    *(loc for loc in finding.locations if loc.role not in ("error", "cause")),
                ),
            )
    return None


def _written_leaf(run: Run, finding: Finding) -> Finding:
    """GP102 refused at the write: its picture is the leaf that line wrote in place, found
    among the variables of the frame that raised by the names the line reads
    (``p.add_(...)``, ``self.weight[0] = ...``)."""
    cause, error = finding.cause, run.error
    if cause is None or not cause.text or error is None:
        return finding
    frames = []
    tb = error.__traceback__
    while tb is not None:  # tb_lineno: the frame itself has moved on since it raised
        if tb.tb_lineno == cause.line and shown_file(tb.tb_frame.f_code.co_filename) == cause.file:
            frames.append(tb.tb_frame)
        tb = tb.tb_next
    if not frames:
        return finding
    variables = dict(frame_variables(frames[-1]))
    for dotted in _NAMES.findall(cause.text):
        parts = dotted.split(".")
        value = variables.get(parts[0])
        used = 1
        while used < len(parts) and not _is_leaf_that_requires_grad(value):
            value = getattr(value, parts[used], None)
            used += 1
        if isinstance(value, torch.Tensor) and _is_leaf_that_requires_grad(value):
            tensor = value
            name = _parameter_name(tensor, run.modules)
            return replace(
                finding,
                graph_slice=leaf_slice(
                    name or ".".join(parts[:used]),
                    f"modified in place at line {cause.line} while it requires grad "
                    "(outside torch.no_grad()): autograd refuses the write",
                    shape=tuple(tensor.shape),
                    dtype=str(tensor.dtype).removeprefix("torch."),
                    device=str(tensor.device),
                    parameter=name is not None,
                ),
            )
    return finding


_NAMES = re.compile(r"[A-Za-z_][\w.]*")


def _is_leaf_that_requires_grad(value: object) -> bool:
    return isinstance(value, torch.Tensor) and value.is_leaf and value.requires_grad


def _parameter_name(tensor: torch.Tensor, modules: Sequence[torch.nn.Module]) -> str | None:
    for top in _top_modules(modules):
        for name, param in top.named_parameters():
            if param is tensor:
                return name
    return None


def _input_made(run: Run, finding: Finding) -> Finding:
    """autograd.grad asked for a tensor that requires no grad: the line that made it
    (``images = torch.rand(...)`` without ``requires_grad=True``) is the one to change."""
    cause, error = finding.cause, run.error
    if cause is None or error is None:
        return finding
    line = (cause.file, cause.line, cause.function or "")
    frames = [
        tb.tb_frame
        for tb in _traceback(error)
        if tb.tb_lineno == cause.line and shown_file(tb.tb_frame.f_code.co_filename) == cause.file
    ]
    if not frames:
        return finding
    frame = frames[-1]
    made = made_line(frame, line[1], lambda tensor: not tensor.requires_grad, run.events.nodes)
    if made is None:
        return finding
    return replace(
        finding,
        locations=(
            *_locations((made, "cause")),
            *(
                replace(loc, role="error") if loc.role == "cause" else loc
                for loc in finding.locations
            ),
        ),
    )


def _traceback(error: BaseException) -> Iterable[TracebackType]:
    tb = error.__traceback__
    while tb is not None:
        yield tb
        tb = tb.tb_next


def _with_cause(finding: Finding) -> Finding:
    """An error recognised from its text alone: where it was raised is what to change
    (an in-place write on a leaf is refused at the line that does it)."""
    if finding.code not in _RAISED_AT_CAUSE:
        return finding
    return replace(
        finding,
        locations=tuple(
            replace(loc, role="cause") if loc.role == "error" else loc for loc in finding.locations
        ),
    )
