"""Custom ``autograd.Function`` s: a backward that returns None where a gradient is needed,
that never reads the gradient it is given, or a tensor kept on ``ctx`` written in place; a
backward whose return torch refuses, or that fails under autocast without the decorators
that restore it."""

from __future__ import annotations

import ast
import linecache
import re
from collections.abc import Callable, Iterable, Sequence
from types import TracebackType

from gradprobe._compat import CUSTOM_RETURN_ERROR, DTYPE_MISMATCH
from gradprobe._recorder import CustomFunction, Events, SourceLine
from gradprobe._source import location_of, traceback_location
from gradprobe.checks._api import Check, Run, register
from gradprobe.checks._common import _locations, _where
from gradprobe.errors import error_text
from gradprobe.findings import Finding, Location, make_finding

__all__ = ["BackwardErrors", "BlindBackward", "CtxWrites", "NoneGradients"]


@register
class NoneGradients(Check):
    """backward returned None for an input that needs a gradient (GP122)."""

    name = "gradprobe.custom_functions.none_gradients"
    codes = ("GP122",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _none_grads(run.events)


@register
class BlindBackward(Check):
    """backward never reads ``grad_output`` (GP128)."""

    name = "gradprobe.custom_functions.blind_backward"
    codes = ("GP128",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _blind_backwards(run.events)


@register
class CtxWrites(Check):
    """A tensor kept on ctx was written in place before backward read it (GP129)."""

    name = "gradprobe.custom_functions.ctx_writes"
    codes = ("GP129",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _ctx_writes(run.events)


@register
class BackwardErrors(Check):
    """A custom backward whose return torch refused (GP138), or that failed on mixed dtypes
    under autocast without ``custom_fwd``/``custom_bwd`` (GP139)."""

    name = "gradprobe.custom_functions.backward_errors"
    codes = ("GP138", "GP139")

    def on_error(self, run: Run, found: Sequence[Finding]) -> Iterable[Finding]:
        error = run.error
        functions = run.events.custom_functions
        if not isinstance(error, RuntimeError) or not functions:
            return ()
        text = error_text(error)
        match = CUSTOM_RETURN_ERROR.search(text)
        if match is not None:
            function = functions.get(match["name"])
            return () if function is None else (_bad_return(function, match, error),)
        inside = _raised_in_backward(error.__traceback__, functions)
        if inside is not None and DTYPE_MISMATCH.search(text):
            function, location = inside
            if function.autocast and not function.custom_bwd:
                return (_without_autocast(function, location, text),)
        return ()


# -- analyses ---------------------------------------------------------------------------


def _bad_return(function: CustomFunction, match: re.Match[str], error: BaseException) -> Finding:
    name = function.name
    if match["got"] is not None:
        got, expected = int(match["got"]), int(match["expected"])
        line = _return_with(function.backward, lambda arity: arity == got)
        what = (
            f"{name}.backward returned {got} value{'s' if got != 1 else ''} where its forward "
            f"takes {expected} argument{'s' if expected != 1 else ''} (after ctx): it must "
            "return one gradient per argument, None for those that are not tensors "
            "needing one (flags, sizes)"
        )
        details: dict[str, object] = {"function": name, "expected": expected, "got": got}
    elif match["index"] is not None:
        index = int(match["index"])
        line = _return_with(function.backward, lambda arity: arity > index)
        what = (
            f"{name}.backward returned a gradient for argument {index} of its forward whose "
            "shape does not fit that argument"
        )
        details = {"function": name, "index": index}
    else:
        index = int(match["position"]) - 1
        line = _return_with(function.backward, lambda arity: arity > index)
        what = (
            f"{name}.backward returned a tensor for argument {index} of its forward, which is "
            "not a tensor that needs a gradient: return None there"
        )
        details = {"function": name, "index": index}
    return make_finding(
        "GP138",
        message=f"{what} (torch: {error_text(error).splitlines()[0]}).",
        node=f"{name}Backward",
        locations=_locations((line, "cause"), (function.applied, "created"))
        + [loc for loc in (traceback_location(error.__traceback__),) if loc is not None],
        details=details,
    )


def _without_autocast(function: CustomFunction, raised: Location, text: str) -> Finding:
    name = function.name
    return make_finding(
        "GP139",
        message=(
            f"{name} was applied under torch.autocast"
            + (f" (at {_where(function.applied)})" if function.applied else "")
            + f", so its forward ran in low precision, but {name}.backward runs with "
            f"autocast off and failed at line {raised.line} mixing dtypes "
            f"({text.splitlines()[0]}). Decorate {name}.forward with "
            "@torch.amp.custom_fwd(device_type=...) and its backward with "
            "@torch.amp.custom_bwd(device_type=...)."
        ),
        node=f"{name}Backward",
        locations=[
            *_locations((function.backward, "cause"), (function.applied, "created")),
            raised,
        ],
        details={"function": name},
    )


def _raised_in_backward(
    tb: TracebackType | None, functions: dict[str, CustomFunction]
) -> tuple[CustomFunction, Location] | None:
    """The custom Function whose backward raised, and the line in it that raised."""
    backwards = {
        (f.backward[0], f.backward[2]): f for f in functions.values() if f.backward is not None
    }
    found: tuple[CustomFunction, Location] | None = None
    while tb is not None:
        code = tb.tb_frame.f_code
        function = backwards.get((code.co_filename, code.co_name))
        if function is not None and function.backward is not None:
            start = function.backward[1]
            if start <= tb.tb_lineno <= start + _body_length(function.backward):
                found = (function, location_of(tb.tb_frame, "error", tb.tb_lineno))
        tb = tb.tb_next
    return found


def _function_at(line: SourceLine) -> ast.FunctionDef | None:
    source = "".join(linecache.getlines(line[0]))
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.lineno == line[1]:
            return node
    return None


def _body_length(line: SourceLine) -> int:
    node = _function_at(line)
    return 0 if node is None or node.end_lineno is None else node.end_lineno - node.lineno


def _return_with(backward: SourceLine | None, fits: Callable[[int], bool]) -> SourceLine | None:
    """The ``return`` in ``backward`` whose number of values ``fits``, when one alone does;
    else the backward's ``def`` line."""
    if backward is None:
        return None
    node = _function_at(backward)
    if node is None:
        return backward
    returns = [
        r
        for r in ast.walk(node)
        if isinstance(r, ast.Return)
        and r.value is not None
        and fits(len(r.value.elts) if isinstance(r.value, ast.Tuple) else 1)
    ]
    if len(returns) == 1:
        return (backward[0], returns[0].lineno, backward[2])
    return backward


def _none_grads(events: Events) -> list[Finding]:
    return [
        make_finding(
            "GP122",
            message=(
                f"{name}.backward returned None for input"
                f"{'s' if len(missing) > 1 else ''} {', '.join(str(i) for i in missing)} of its "
                "forward"
                + (f" (at {_where(line)})" if line else "")
                + ", although "
                + ("they need" if len(missing) > 1 else "it needs")
                + " a gradient: autograd takes None as zero, so whatever is behind "
                + ("them" if len(missing) > 1 else "it")
                + " (a parameter) silently gets no gradient. Return the gradient for every "
                "input with ctx.needs_input_grad[i] True."
            ),
            node=f"{name}Backward",
            locations=_locations((line, "cause")),
            details={"function": name, "inputs": missing},
        )
        for name, missing, line in events.none_grads[:1]
    ]


def _blind_backwards(events: Events) -> list[Finding]:
    found = []
    for name, line, key, ones in events.blind_backwards[:3]:
        record = events.nodes.get(key)
        now = (
            "Here the gradient arriving was all ones, so this run's gradients are right by "
            "luck; weight, average or scale the output (a GradScaler, a loss weight) and "
            "they are wrong."
            if ones
            else "The gradient arriving here was not all ones, so every gradient behind "
            f"{name} is wrong, without an error."
        )
        found.append(
            make_finding(
                "GP128",
                message=(
                    f"{name}.backward never reads the gradient it is given, yet returned "
                    f"gradients (at {_where(line)}): it returns the local derivative of "
                    f"{name}.forward instead of grad_output times it. {now}"
                ),
                node=f"{name}Backward",
                locations=_locations(
                    (line, "cause"), (record.line if record is not None else None, "created")
                ),
                details={"function": name, "arrived_all_ones": ones},
            )
        )
    return found


def _ctx_writes(events: Events) -> list[Finding]:
    found = []
    seen: set[tuple[str, str]] = set()
    for kept in events.ctx_writes:
        name = kept.function
        if (name, kept.slot) in seen:
            continue
        seen.add((name, kept.slot))
        write = next(
            (w for w in events.writes if w.storage == kept.storage and w.order > kept.order),
            None,
        )
        where = f" by {write.op} at {_where(write.line)}" if write is not None else ""
        found.append(
            make_finding(
                "GP129",
                message=(
                    f"ctx.{kept.slot}, kept on the ctx of {name} "
                    + (f"at {_where(kept.stored)} " if kept.stored else "")
                    + f"instead of saved with ctx.save_for_backward, was modified in place"
                    f"{where} after {name}.apply"
                    + (f" at {_where(kept.line)}" if kept.line else "")
                    + f" and before its backward ran. Autograd checks versions only of "
                    f"tensors saved with save_for_backward, so {name}.backward silently used "
                    "the new values and its gradients are wrong."
                ),
                node=f"{name}Backward",
                locations=_locations(
                    (write.line if write is not None else None, "cause"),
                    (kept.stored, "saved"),
                    (kept.line, "created"),
                ),
                details={"function": name, "attribute": kept.slot},
            )
        )
    return found
