"""Turn PyTorch's autograd errors into explained ones, without changing what they are.

Inside ``with gradprobe.explain():`` an autograd error gradprobe recognizes is re-raised as
an exception whose class inherits both :class:`~gradprobe.findings.AutogradError` (a
:class:`~gradprobe.errors.GradprobeError`) and the original type, so ``except
RuntimeError`` keeps working. Its message is gradprobe's explanation, a blank line, then
PyTorch's original text; the original exception is its ``__cause__`` and the finding is in
``.findings``. Other exceptions pass through untouched.

Example:
    >>> import torch
    >>> from gradprobe.explain import explain
    >>> x = torch.ones(3, requires_grad=True)
    >>> try:
    ...     with explain():
    ...         (x * 2).backward()
    ... except RuntimeError as error:
    ...     print(error.finding.code, type(error.__cause__).__name__)
    GP105 RuntimeError

The generated classes (``gradprobe.explain.ExplainedRuntimeError`` for a ``RuntimeError``)
are cached per original type and pickle by reference to that type, so they survive being
sent between processes as long as the original type is importable.
"""

from __future__ import annotations

import linecache
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from contextlib import ContextDecorator
from dataclasses import replace
from pathlib import Path
from typing import Any, final

import torch

from gradprobe._compat import (
    FREED_ERROR,
    INTEGER_GRAD_ERROR,
    LEAF_INPLACE_ERROR,
    NO_GRAD_FN_ERROR,
    NON_LEAF_FLAG_ERROR,
    NONSCALAR_ERROR,
)
from gradprobe.check import check, parse_version_error
from gradprobe.errors import GradprobeTypeError, describe
from gradprobe.findings import AutogradError, Finding, Location, make_finding

__all__ = ["Explain", "explain", "explain_error"]

_VIEW_INPLACE = (
    (
        "BackwardHookFunction",
        (
            "it is the output of a module with a full backward hook (register_full_backward_"
            "hook wraps it in a BackwardHookFunction view), written by an in-place op after "
            "it such as nn.ReLU(inplace=True); use inplace=False after hooked modules"
        ),
    ),
    (
        "is the output of a function that returns multiple views",
        (
            "it is one of several views returned by one call (split, chunk, unbind), e.g. "
            "`i, f = gates.chunk(2, 1); i.sigmoid_()`; use the out-of-place op "
            "(`i = i.sigmoid()`) or clone() the piece first"
        ),
    ),
    (
        "was created in no_grad mode and is being modified inplace with grad mode enabled",
        (
            "it was made under torch.no_grad() and is written with grad mode on; make it "
            "outside no_grad, or write it inside no_grad too"
        ),
    ),
    (
        "was created inside a custom Function",
        (
            "it is a view returned by a custom autograd.Function's forward; return a copy "
            "(clone()) from the Function, or do not write to its output in place"
        ),
    ),
)

# Frames from these directories are PyTorch's or ours, not the line the user wrote.
_SKIP_DIRS = tuple(
    str(Path(module.__file__).resolve().parent)
    for module in (torch, sys.modules["gradprobe"], sys.modules["contextlib"])
    if module.__file__
)

_WRITERS = {
    "torch::autograd::CopySlices": (
        "it was written through an index or slice (t[i] = ..., t[:, 0] += ...), which turns "
        "its grad_fn into CopySlices"
    ),
    "AsStrided": (
        "it is a view (such as weight.t(), saved by linear layers) of a tensor that was "
        "updated in place, typically a parameter changed by optimizer.step()"
    ),
}


def explain_error(exc: BaseException) -> Finding | None:
    """The finding behind an autograd error, from its text alone; None if not recognized.

    Recognized: in-place modification of a saved tensor (GP101), in-place on a leaf
    (GP102), backward through a freed graph (GP103), backward on a tensor without grad_fn
    (GP104), implicit backward of a non-scalar (GP105). The ``error`` location is the
    innermost frame of the traceback outside torch and gradprobe.
    """
    if not isinstance(exc, RuntimeError) or isinstance(exc, AutogradError):
        return None
    text = str(exc)
    finding = _from_text(text)
    if finding is None:
        return None
    location = _error_location(exc)
    if location is not None:
        finding = replace(finding, locations=(*finding.locations, location))
    return finding


def _from_text(text: str) -> Finding | None:
    version = parse_version_error(text)
    if version is not None:
        tensor = version.description
        if version.grad_fn is None:
            what = (
                "it has no grad_fn (a leaf or an input), so it was written in place under "
                "torch.no_grad() or inference_mode, or by optimizer.step() if it is a parameter"
            )
        else:
            what = _WRITERS.get(version.grad_fn) or (
                f"it is output {version.output} of {version.grad_fn}, which was modified in "
                f"place after it was saved; {version.grad_fn} often saves its own output "
                "(sigmoid, exp, tanh, relu, softmax do), so an in-place op right after it "
                "(relu_, nn.ReLU(inplace=True), +=) breaks it"
            )
        return make_finding(
            "GP101",
            message=(
                f"A tensor saved for backward, [{tensor}], was modified in place: it was saved "
                f"at version {version.version_saved} and is at version {version.version_now} "
                f"now; {what}."
            ),
            tensor=tensor,
            details={
                "shape": list(version.shape),
                "version_saved": version.version_saved,
                "version_now": version.version_now,
                "grad_fn_now": version.grad_fn,
                "is_leaf": version.grad_fn is None,
            },
        )
    match = LEAF_INPLACE_ERROR.search(text)
    if match is not None:
        if match.group(0).startswith("leaf variable has been moved"):
            message = (
                "A leaf that requires grad was turned into a non-leaf by an in-place operation "
                "(requires_grad_(False) then an in-place op with a tensor that requires grad) "
                "after a graph using it was built; backward through that graph fails."
            )
        else:
            what = "a view of a leaf" if match["view"] else "a leaf tensor"
            message = (
                f"An in-place operation was applied to {what} that requires grad (a parameter "
                "or an input created with requires_grad=True) outside torch.no_grad()."
            )
        return make_finding("GP102", message=message)
    if FREED_ERROR in text:
        return make_finding(
            "GP103",
            message=(
                "backward() (or autograd.grad) already ran through part of this graph and "
                "released its saved tensors; this second pass reached them. Usually a tensor "
                "from the previous iteration (a hidden state, a running loss) was reused "
                "without .detach(), or backward was called twice."
            ),
        )
    match = NO_GRAD_FN_ERROR.search(text)
    if match is not None:
        return make_finding(
            "GP104",
            message=(
                f"Tensor {match['index']} passed to backward() does not require grad and has "
                "no grad_fn: nothing connects it to a parameter that requires grad."
            ),
        )
    for marker, why in _VIEW_INPLACE:
        if marker in text:
            return make_finding(
                "GP124",
                message=(
                    f"A view that autograd cannot follow was modified in place: {why}. "
                    "Autograd can rebase an ordinary view onto its base after an in-place "
                    "write, but not this one, so it refuses."
                ),
            )
    if INTEGER_GRAD_ERROR.search(text):
        return make_finding(
            "GP125",
            message=(
                "requires_grad=True was asked of a tensor with an integer (or bool) dtype; "
                "only floating-point and complex tensors can have gradients. An integer "
                "literal makes an integer tensor: torch.tensor(10) is int64, "
                "torch.tensor(10.0) is float32."
            ),
        )
    if NON_LEAF_FLAG_ERROR in text:
        return make_finding(
            "GP126",
            message=(
                "requires_grad was set on a tensor computed by an operation (a non-leaf). "
                "Its requires_grad follows from its inputs and cannot be switched: to get "
                "its .grad call .retain_grad(); to cut it from the graph use .detach(); to "
                "make a new leaf use .detach().requires_grad_()."
            ),
        )
    if NONSCALAR_ERROR in text:
        return make_finding(
            "GP105",
            message=(
                "backward() was called without a gradient on a tensor with more than one "
                "element; autograd can only start from 1.0 for a single-element tensor."
            ),
        )
    return None


def _error_location(exc: BaseException) -> Location | None:
    location = None
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        filename = str(Path(code.co_filename).resolve()) if code.co_filename else ""
        if filename and not filename.startswith(_SKIP_DIRS) and not filename.startswith("<"):
            text = linecache.getline(filename, tb.tb_lineno).strip() or None
            location = Location(
                file=filename, line=tb.tb_lineno, role="error", function=code.co_name, text=text
            )
        tb = tb.tb_next
    return location


# -- the re-raised exception ------------------------------------------------------------------

_classes: dict[type[BaseException], type[AutogradError]] = {}


def _rebuild(original: type[BaseException], message: str, findings: tuple[Finding, ...]) -> Any:
    cls = _explained_class(original)
    error = cls(message) if cls is not None else original(message)
    error.findings = findings  # type: ignore[attr-defined]
    return error


def _reduce(self: AutogradError) -> tuple[Any, ...]:
    original: type[BaseException] = getattr(self, "_original_type")  # noqa: B009
    return (_rebuild, (original, str(self), self.findings))


def _explained_class(original: type[BaseException]) -> type[AutogradError] | None:
    """``Explained<Name>(AutogradError, original)``, cached; None if Python refuses the
    combination (incompatible C layouts)."""
    cls = _classes.get(original)
    if cls is None:
        try:
            cls = types.new_class(
                f"Explained{original.__name__}",
                (AutogradError, original),
                exec_body=lambda ns: ns.update(
                    {
                        "__module__": __name__,
                        "__doc__": f"An explained {original.__qualname__} (see .findings).",
                        "__reduce__": _reduce,
                        "_original_type": original,
                    }
                ),
            )
        except TypeError:
            return None
        _classes[original] = cls
    return cls


def _explanation(findings: tuple[Finding, ...]) -> str:
    lines: list[str] = []
    for finding in findings:
        lines.append(f"gradprobe {finding.code} {finding.kind}: {finding.title}.")
        lines.append(finding.message)
        if finding.node:
            lines.append(f"Node: {finding.node}")
        if finding.hint:
            lines.append(f"Fix: {finding.hint}")
        lines.extend(
            f"At ({location.role}): {location.file}:{location.line}"
            + (f": {location.text}" if location.text else "")
            for location in finding.locations
        )
        lines.append(f"See {finding.doc}")
    return "\n".join(lines)


@final
class Explain(ContextDecorator):
    """The context manager (and decorator) returned by :func:`explain`."""

    def __init__(
        self,
        tensors: tuple[Any, ...],
        model: torch.nn.Module | None,
        names: Mapping[str, torch.Tensor] | None,
    ) -> None:
        self._tensors = tensors
        self._model = model
        self._names = names

    def __enter__(self) -> Explain:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: types.TracebackType | None,
    ) -> None:
        if exc is None or not isinstance(exc, Exception):
            return
        finding = explain_error(exc)
        if finding is None:
            return
        findings = self._refine(finding)
        cls = _explained_class(type(exc))
        message = f"{_explanation(findings)}\n\n{exc}"
        if cls is None:  # cannot subclass the original type: annotate it instead
            if sys.version_info >= (3, 11):
                exc.add_note(_explanation(findings))
            return
        error = cls(message)
        error.findings = findings
        raise error.with_traceback(tb) from exc

    def _refine(self, finding: Finding) -> tuple[Finding, ...]:
        """With tensors to probe, replace a text-only GP101 by check()'s findings for the
        same tensor (which node, which slot, which parameter)."""
        if finding.code != "GP101" or not self._tensors:
            return (finding,)
        try:
            report = check(*self._tensors, model=self._model, names=self._names)
        except RuntimeError:  # never hide the user's error behind ours
            return (finding,)
        same = tuple(
            replace(found, locations=(*found.locations, *finding.locations))
            for found in report.findings
            if found.code in ("GP101", "GP109")
            and found.details.get("version_saved") == finding.details["version_saved"]
            and found.details.get("version_now") == finding.details["version_now"]
            and found.details.get("shape") == finding.details["shape"]
        )
        return same or (finding,)


def explain(
    *tensors: torch.Tensor | Sequence[torch.Tensor],
    model: torch.nn.Module | None = None,
    names: Mapping[str, torch.Tensor] | None = None,
) -> Explain:
    """Explain autograd errors raised inside a ``with`` block or a decorated function.

    Args:
        tensors: optional; the graph to probe when an in-place error escapes (usually the
            loss), so the explanation can name the node, slot and parameter. They are held
            until the block ends (for a decorator: as long as the function lives).
        model: names parameters in that probe.
        names: more names, ``{"x": x}``.

    Example::

        with gradprobe.explain(loss):
            loss.backward()

        @gradprobe.explain()
        def train_step(batch): ...

    Raises:
        GradprobeTypeError: something other than tensors, or ``@explain`` without
            parentheses.
    """
    for item in tensors:
        if isinstance(item, Callable) and not isinstance(item, torch.Tensor):  # type: ignore[arg-type]
            msg = (
                f"explain() was given {describe(item)}; to decorate a function write "
                "@gradprobe.explain() with parentheses, and pass only tensors to explain(...)."
            )
            raise GradprobeTypeError(msg)
    if tensors:
        # Validate now rather than when an error is already in flight.
        check_args = sys.modules["gradprobe.trace"]
        check_args._flatten(tensors)
        check_args._name_table(model, names)
    return Explain(tensors, model, names)
