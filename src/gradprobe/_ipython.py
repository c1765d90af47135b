"""The IPython extension: ``%load_ext gradprobe`` in a notebook or an IPython shell.

Loading it adds two things, and ``%unload_ext gradprobe`` removes both:

- the ``%%gradprobe`` cell magic: the cell runs inside :func:`gradprobe.record`, then the
  Recording is shown (its findings in the interactive viewer, or "nothing to report"),
  also when the cell raised.
  ``%%gradprobe rec`` also keeps the Recording in the variable ``rec``. A last expression
  is the cell's result, as in any cell; line numbers are those of the cell as written
  (the magic's line is line 1).
- autograd errors explained in place: when any later cell raises a ``RuntimeError`` that
  :func:`gradprobe.explain` recognizes, gradprobe's explanation is shown above IPython's
  usual traceback. Other exceptions are shown exactly as before; a custom exception
  handler installed before gradprobe keeps handling the exceptions it asked for.

Locations in a notebook are named by cell (``In [3], line 2``; see
:func:`gradprobe._source.cell_name`).
"""

from __future__ import annotations

import ast
import sys
import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gradprobe.errors import GradprobeTypeError, GradprobeValueError, describe

if TYPE_CHECKING:
    from gradprobe.findings import Finding

# The shell is typed Any: IPython's own annotations are partial (set_custom_exc,
# transform_cell and display are untyped), and any InteractiveShell subclass will do.
InteractiveShell = Any

__all__ = ["load", "unload"]

_MAGIC = "gradprobe"


@dataclass
class _Loaded:
    """What loading changed on one shell, to put back on unloading."""

    custom_exceptions: tuple[type[BaseException], ...]
    custom_tb: Any
    # id() of the exception the last %%gradprobe cell raised, which its Recording explained
    # (an id: the exception's frames would keep the cell's tensors alive)
    shown: int | None = None


_loaded: dict[int, _Loaded] = {}  # id(shell) -> its state


def load(shell: InteractiveShell) -> None:
    """``%load_ext gradprobe``: add the ``%%gradprobe`` magic and explain autograd errors.
    Loading twice changes nothing."""
    if not hasattr(shell, "set_custom_exc"):
        msg = (
            f"gradprobe's IPython extension needs an IPython shell, got {describe(shell)}; "
            "run %load_ext gradprobe in a notebook or an IPython shell."
        )
        raise GradprobeTypeError(msg)
    if id(shell) in _loaded:
        return
    state = _Loaded(tuple(shell.custom_exceptions), shell.CustomTB)
    _loaded[id(shell)] = state

    def gradprobe(line: str, cell: str) -> Any:
        __tracebackhide__ = True  # IPython leaves this frame out of tracebacks
        return _run_cell(shell, state, line, cell)

    gradprobe.__doc__ = _CELL_HELP
    shell.register_magic_function(gradprobe, magic_kind="cell", magic_name=_MAGIC)

    def handler(
        self: InteractiveShell,
        etype: type[BaseException],
        value: BaseException,
        tb: types.TracebackType | None,
        tb_offset: int | None = None,
    ) -> None:
        _handle(self, state, etype, value, tb, tb_offset)

    shell.set_custom_exc((RuntimeError, *state.custom_exceptions), handler)


def unload(shell: InteractiveShell) -> None:
    """``%unload_ext gradprobe``: remove the magic and the error explanations, and give
    back the custom exception handler that was there before."""
    state = _loaded.pop(id(shell), None)
    if state is None:
        return
    shell.magics_manager.magics["cell"].pop(_MAGIC, None)
    # set_custom_exc would wrap the saved handler a second time: put back both as they were
    shell.custom_exceptions = state.custom_exceptions
    shell.CustomTB = state.custom_tb


_CELL_HELP = """Run the cell inside gradprobe.record() and show what it found.

    %%gradprobe [NAME]

The Recording (its findings, or "nothing to report") is shown after the cell, also when
the cell raised; with NAME it is also kept in that variable. A last expression is the
cell's result, as in any cell.
"""


def _run_cell(shell: InteractiveShell, state: _Loaded, line: str, cell: str) -> Any:
    __tracebackhide__ = True
    from gradprobe._record import record

    name = line.strip()
    if name and not name.isidentifier():
        msg = (
            f"%%gradprobe takes one optional variable name to keep the Recording in, got "
            f"{name!r}; write e.g. %%gradprobe rec"
        )
        raise GradprobeValueError(msg)
    # One blank line first: the magic's own line is line 1 of the cell as the user sees it.
    # (The raw code names the file ipykernel compiles it from: with the blank line too, it
    # is not the file of a plain cell holding the same code.)
    source = "\n" + shell.transform_cell(cell)
    filename = shell.compile.cache(source, _cell_number(shell), raw_code="\n" + cell)
    tree = ast.parse(source, filename=filename)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    namespace = shell.user_ns
    recording = record()
    try:
        with recording:
            exec(shell.compile(tree, filename, "exec"), namespace)  # noqa: S102  (the cell)
            if last is None:
                return None
            expression = ast.Expression(last.value)
            return eval(shell.compile(expression, filename, "eval"), namespace)
    except RuntimeError as error:
        state.shown = id(error)  # the Recording explains it: no second explanation
        raise
    finally:
        if name:
            namespace[name] = recording
        # the viewer when there is something to look into; else one line, not a panel
        # under every cell
        shown = recording._repr_html_() if recording.findings else recording._report_html()
        _display(str(recording), shown)


def _cell_number(shell: InteractiveShell) -> int:
    """The execution count of the cell running this magic: that of the innermost calling
    frame IPython compiled from a cell. (``shell.execution_count`` is already the next
    cell's while a cell runs, on IPython >= 8.)"""
    table = getattr(shell.compile, "_filename_map", {})
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        number = table.get(frame.f_code.co_filename)
        if isinstance(number, int):
            return number
        frame = frame.f_back
    return int(shell.execution_count)


def _handle(
    shell: InteractiveShell,
    state: _Loaded,
    etype: type[BaseException],
    value: BaseException,
    tb: types.TracebackType | None,
    tb_offset: int | None,
) -> None:
    """The custom exception handler: explain, then show the usual traceback."""
    shown, state.shown = state.shown, None
    previous = state.custom_exceptions
    if previous and isinstance(value, previous) and state.custom_tb is not None:
        state.custom_tb(etype, value, tb, tb_offset=tb_offset)
        return
    if id(value) != shown:
        finding = _explained(value)
        if finding is not None:
            _display(*_explanation(finding))
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)


def _explained(value: BaseException) -> Finding | None:
    from gradprobe.checks._errortext import explain_error

    try:
        return explain_error(value)
    except Exception:  # noqa: BLE001  (never let the explanation hide the user's error)
        return None


def _explanation(finding: Finding) -> tuple[str, str]:
    from gradprobe.render.findings import finding_panel, findings_text
    from gradprobe.render.html_report import to_html

    header = "gradprobe explains this error:"
    return findings_text([finding], header=header), to_html(finding_panel(finding), header=header)


def _display(text: str, html: str) -> None:
    from IPython.display import display

    display({"text/plain": text, "text/html": html}, raw=True)  # type: ignore[no-untyped-call]
