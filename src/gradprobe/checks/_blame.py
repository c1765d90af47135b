"""The line to change behind an error, read from the shape of its traceback (never from its
text): :func:`blame` is shared by the error catalogue's worded entries and GP168.

=====================================  =========================================================
the traceback                          the ``cause``
=====================================  =========================================================
user code that backward() called       that code's line (a custom Function's ``backward``, a
(a Function's backward, a hook)        hook): it computed or returned what torch refused
a torch call that refused its          the call (a wrong argument, a call made where it cannot
arguments, outside backward            be)
the user's own ``raise`` / ``assert``  none: the user's own check fired
a ``backward()`` / ``autograd.grad``   none from the traceback: what went wrong was built
line, the engine raising               earlier (the caller may know the node's line)
=====================================  =========================================================
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass
from types import TracebackType

from gradprobe._recorder import SourceLine
from gradprobe._source import is_user_file

__all__ = ["Blame", "blame", "raised_by_torch"]

# torch's Python wrapper that hands a backward to the C++ engine: user frames after it are
# code the engine called back (hooks, custom Functions' backward)
_ENGINE = frozenset(["_engine_run_backward", "run_backward"])
_OWN_RAISE = ("raise ", "raise\n", "raise(", "assert ", "assert(")
_HANDS_TO_ENGINE = (".backward(", "autograd.grad(", "autograd.backward(")


@dataclass(frozen=True)
class Blame:
    """What a traceback says about where an error came from."""

    cause: SourceLine | None  # the line to change, when the traceback shows it
    error: SourceLine | None  # the user's line the error surfaced at (outside backward)
    how: str  # why ``cause`` is that line, in words ("" when there is no cause)
    in_backward: bool  # the error came out of a backward() / autograd.grad call
    own_raise: bool  # the user's own raise/assert statement raised it


def blame(tb: TracebackType | None) -> Blame:
    """Where the error of traceback ``tb`` came from (see the module's table)."""
    outer: list[SourceLine] = []
    inner: list[SourceLine] = []
    in_engine = innermost_is_user = False
    while tb is not None:
        code = tb.tb_frame.f_code
        user = is_user_file(code.co_filename)
        if not user and code.co_name in _ENGINE:
            in_engine = True
        elif user:
            (inner if in_engine else outer).append((code.co_filename, tb.tb_lineno, code.co_name))
        innermost_is_user = user
        tb = tb.tb_next
    error = outer[-1] if outer else None
    if inner:
        return Blame(inner[-1], error, "raised in code backward() ran", True, _own(inner[-1]))
    if error is None:
        return Blame(None, None, "", in_engine, False)
    own = innermost_is_user and _own(error)
    hands = _source(error).find
    if own or any(hands(call) >= 0 for call in _HANDS_TO_ENGINE):
        return Blame(None, error, "", in_engine, own)
    return Blame(error, error, "torch refused this call", in_engine, False)


def raised_by_torch(error: BaseException) -> bool:
    """Whether torch raised ``error`` (by origin and type, not by its text): an exception
    type of Python's or torch's, not raised by a ``raise`` of the user's own code."""
    module = type(error).__module__
    if module != "builtins" and module.split(".")[0] != "torch":
        return False
    return not blame(error.__traceback__).own_raise


def _own(line: SourceLine) -> bool:
    return _source(line).lstrip().startswith(_OWN_RAISE)


def _source(line: SourceLine) -> str:
    return linecache.getline(line[0], line[1])
