"""Turn PyTorch's autograd errors into explained ones, without changing what they are.

Inside ``with gradprobe.explain():`` an autograd error gradprobe recognizes is re-raised as
an exception whose class inherits both :class:`~gradprobe.findings.AutogradError` (a
:class:`~gradprobe.errors.GradprobeError`) and the original type, so ``except
RuntimeError`` keeps working. Its message is gradprobe's explanation, a blank line, then
PyTorch's original text; the original exception is its ``__cause__`` and the finding is in
``.findings``. Other exceptions pass through untouched.

Example:
    >>> import torch
    >>> from gradprobe._explain import explain
    >>> x = torch.ones(3, requires_grad=True)
    >>> try:
    ...     with explain():
    ...         (x * 2).backward()
    ... except RuntimeError as error:
    ...     print(error.finding.code, type(error.__cause__).__name__)
    GP105 RuntimeError

The generated classes (``gradprobe._explain.ExplainedRuntimeError`` for a ``RuntimeError``)
are cached per original type and pickle by reference to that type, so they survive being
sent between processes as long as the original type is importable.
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from contextlib import ContextDecorator
from dataclasses import replace
from typing import Any, final

import torch

from gradprobe._check import check
from gradprobe._trace import flatten, name_table
from gradprobe._tracebacks import user_traceback
from gradprobe.checks._errortext import explain_error
from gradprobe.errors import GradprobeTypeError, describe
from gradprobe.findings import AutogradError, Finding

__all__ = ["Explain", "explain", "explain_error"]


_classes: dict[type[BaseException], type[AutogradError]] = {}


def _rebuild(original: type[BaseException], message: str, findings: tuple[Finding, ...]) -> Any:
    cls = _explained_class(original)
    error = _instance(cls, message) if cls is not None else original(message)
    if error is None:
        error = BaseException.__new__(original)
        BaseException.__init__(error, message)
    error.findings = findings  # type: ignore[attr-defined]
    return error


def _instance(cls: type[AutogradError], message: str) -> AutogradError | None:
    """An explained error carrying ``message``, also when the user's exception class takes
    other arguments (``MyError(step, text)``): then made without calling its ``__init__``.
    None if even that is refused (a ``__new__`` of its own that needs its arguments)."""
    with contextlib.suppress(Exception):  # the user's __init__ may refuse one argument
        return cls(message)
    try:
        error = BaseException.__new__(cls)
    except Exception:  # noqa: BLE001
        return None
    BaseException.__init__(error, message)
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
                        # the explanation, whatever __str__ the user's class defines
                        "__str__": BaseException.__str__,
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
            f"At ({location.role}): {location.where}"
            + (f": {location.text}" if location.text else "")
            for location in finding.locations
        )
        lines.append(f"See: {finding.read_more}")
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
        user_traceback(exc)  # what it shows, also as the cause of an explained error
        finding = explain_error(exc)  # torch's own errors only
        if finding is None:
            return
        try:
            text = str(exc)
        except Exception:  # noqa: BLE001  (its __str__ fails: leave the error as it is)
            return
        findings = self._refine(finding)
        cls = _explained_class(type(exc))
        message = f"{_explanation(findings)}\n\n{text}"
        error = None if cls is None else _instance(cls, message)
        if error is None:  # cannot subclass or make the original type: annotate it instead
            if sys.version_info >= (3, 11):
                exc.add_note(_explanation(findings))
            return
        error.findings = findings
        # what the user's class keeps (MyError(step, text).step) stays readable
        for name, value in vars(exc).items():
            if name not in ("findings", "__notes__"):
                setattr(error, name, value)
        # exc.__traceback__, not tb: the frames gradprobe added are out of it now
        raise error.with_traceback(exc.__traceback__) from exc

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
        flatten(tensors)
        name_table(model, names)
    return Explain(tensors, model, names)
