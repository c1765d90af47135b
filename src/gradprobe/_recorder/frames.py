"""Whose call it is: the user's line above the recorder's own frames, and no frames kept.

The mode runs inside the user's call, so the stack above it is the user's (NOTE [recorder]
in :mod:`gradprobe._recorder.mode`). Frames of files that only hand a call on (the
recorder's own files, gradprobe's patches, dynamo's eager wrapper) are stepped over to
find the caller, and a caller in gradprobe's own package is not the user. Warnings torch
raises during a call are re-issued at the user's line; an error a recording keeps loses
its traceback, whose frames would keep the user's locals alive.
"""

from __future__ import annotations

import contextlib
import os
import sys
import types
import warnings
import weakref
from pathlib import Path
from types import CodeType, FrameType, TracebackType
from typing import Any

import torch

from gradprobe._recorder.events import SourceLine, Stack
from gradprobe._source import is_gradprobe_file, is_user_file
from gradprobe.errors import UNPRINTABLE, error_text

__all__ = [
    "call_from",
    "frameless",
    "is_relay",
    "passes_calls_on",
    "plain_caller",
    "user_stack",
]

# Files whose frames only pass a torch call on to the mode: the caller is above them. All
# of the recorder's own files are: a recording inside another one calls torch from them
# (its mode's __torch_function__, backward(), requires_grad_(), ...). Joined as the import
# system joins a module's __file__ (pathlib would normalise the directory).
_HERE = os.path.dirname(__file__)  # noqa: PTH120
_PASSING_ON = {
    os.path.join(_HERE, name)  # noqa: PTH118
    for name in os.listdir(_HERE)  # noqa: PTH208
    if name.endswith(".py")
}


def passes_calls_on(filename: str) -> None:
    """Frames of ``filename`` (gradprobe's patches, dynamo's eager wrapper) only hand the
    user's torch call on: the mode looks above them for the caller."""
    _PASSING_ON.add(filename)


_ours: dict[CodeType, bool] = {}


def _is_ours(code: CodeType) -> bool:
    """Code in gradprobe's own package (not tests or examples): its torch calls are not the
    user's and are not recorded."""
    verdict = _ours.get(code)
    if verdict is None:
        verdict = _ours[code] = is_gradprobe_file(code.co_filename)
    return verdict


_OVERRIDES = os.path.join(os.path.dirname(torch.__file__), "overrides.py")  # noqa: PTH118, PTH120


def plain_caller(frame: FrameType | None) -> FrameType | None:
    """The frame that calls the torch function in plain torch, starting from the mode's
    caller: above the frames that pass the call on, ``handle_torch_function`` and the
    entry of the torch function that dispatched to the mode (NOTE [interposed frames] in
    :mod:`gradprobe._tracebacks`)."""
    dispatched = False
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename in _PASSING_ON:
            frame = frame.f_back
        elif filename == _OVERRIDES:
            dispatched = True
            frame = frame.f_back
        else:
            break
    if dispatched and frame is not None:
        frame = frame.f_back
    return frame


# NOTE [calls made from the caller's line]
# A warning torch raises names a frame: the Python frame running when C++ code warns
# (stacklevel 1), or the caller of a torch function written in Python (stacklevel 2). Under
# the mode that frame is the recorder's. A call made through `call_from(caller)` runs in a
# one-line function compiled with the caller's file, line and name and its module's
# globals, so the warning names the caller's line and is filtered and registered (Python's
# once-per-line) in the caller's module, as in plain torch. Its frame is one of
# gradprobe's: `gradprobe._tracebacks` takes it out of tracebacks (`is_relay`).
_RELAY = compile("lambda func, args, kwargs: func(*args, **kwargs)", "<relay>", "eval")
_RELAY_CODE: CodeType = next(c for c in _RELAY.co_consts if isinstance(c, CodeType))
_relay_codes: dict[tuple[str, int, str], CodeType] = {}
_RELAY_IDS: set[int] = set()  # id() of every relay code object (they are never freed)
_MAX_RELAYS = 4096  # distinct caller lines; past that, calls go direct


def _relay_code(filename: str, lineno: int, name: str) -> CodeType | None:
    key = (filename, lineno, name)
    code = _relay_codes.get(key)
    if code is None:
        if len(_relay_codes) >= _MAX_RELAYS:
            return None
        changes: dict[str, Any] = {
            "co_filename": filename,
            "co_firstlineno": lineno,
            "co_name": name,
        }
        if sys.version_info >= (3, 11):
            changes["co_qualname"] = name
        code = _relay_codes[key] = _RELAY_CODE.replace(**changes)
        _RELAY_IDS.add(id(code))
    return code


def is_relay(code: CodeType) -> bool:
    """Whether ``code`` is a relay of NOTE [calls made from the caller's line]."""
    return id(code) in _RELAY_IDS


def call_from(
    caller: FrameType | None,
    relays: dict[tuple[CodeType, int], Any],
    func: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    """``func(*args, **kwargs)``, made from ``caller``'s line (NOTE [calls made from the
    caller's line]); ``relays`` caches the functions (the caller's globals stay alive as
    long as it does)."""
    if caller is None:
        return func(*args, **kwargs)
    code = caller.f_code
    key = (code, caller.f_lineno)
    relay = relays.get(key)
    if relay is None:
        made = _relay_code(code.co_filename, key[1], code.co_name)
        if made is None:
            return func(*args, **kwargs)
        relay = relays[key] = types.FunctionType(made, caller.f_globals)
    return relay(func, args, kwargs)


def _user_line(frame: FrameType | None) -> SourceLine | None:
    while frame is not None:
        code = frame.f_code
        if is_user_file(code.co_filename):
            return (code.co_filename, frame.f_lineno, code.co_name)
        frame = frame.f_back
    return None


def user_stack(frame: FrameType | None) -> Stack:
    """The user's frames from ``frame`` outwards, as lines, outermost first: who called
    whom down to the call. Read only where a switch changes or a step meets one (rare)."""
    lines: list[SourceLine] = []
    while frame is not None:
        code = frame.f_code
        if is_user_file(code.co_filename):
            lines.append((code.co_filename, frame.f_lineno, code.co_name))
        frame = frame.f_back
    lines.reverse()
    return tuple(lines)


_DRIVERS = tuple(
    os.sep + str(Path("torch", *parts))
    for parts in (("autograd", "functional.py"), ("autograd", "gradcheck.py"), ("_functorch",))
)


def _from_torch_driver(frame: FrameType | None) -> bool:
    """Whether torch code that runs its own backward passes (autograd.functional,
    gradcheck, torch.func) made this call, rather than the user's code directly."""
    while frame is not None:
        filename = frame.f_code.co_filename
        if is_user_file(filename):
            return False
        if any(driver in filename for driver in _DRIVERS):
            return True
        frame = frame.f_back
    return False


def _running_module() -> tuple[str, str] | None:
    """The innermost nn.Module whose method is on the call stack, as (its name in the
    outermost one, its class): ``("1.lin", "Linear")``. Found once, when a NaN turns up,
    so no module hook is needed for it."""
    running: list[torch.nn.Module] = []
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        owner = frame.f_locals.get("self") if frame.f_code.co_varnames[:1] == ("self",) else None
        if (
            isinstance(owner, torch.nn.Module)
            and not _is_ours(frame.f_code)
            and (not running or running[-1] is not owner)
        ):
            running.append(owner)
        frame = frame.f_back
    if not running:
        return None
    inner, outer = running[0], running[-1]
    kind = type(inner).__name__
    for name, module in outer.named_modules():
        if module is inner:
            return name, kind
    return "", kind


_REISSUED: weakref.WeakKeyDictionary[Any, set[tuple[str, type[Warning], int]]] = (
    weakref.WeakKeyDictionary()
)


def _warn_from_user(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Call ``func``, re-issuing its warnings at the user's line: a warning raised from C++
    is attributed to the running Python frame, which would be this recorder's, not the
    user's (``.grad`` of a non-leaf warns every time)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = func(*args, **kwargs)
    frame: FrameType | None = sys._getframe(2)
    while frame is not None and not is_user_file(frame.f_code.co_filename):
        frame = frame.f_back
    shown = _REISSUED.setdefault(frame.f_code, set()) if frame is not None else set()
    for warning in caught:
        key = (str(warning.message), warning.category, frame.f_lineno if frame else 0)
        if key in shown and not _always(warning, frame):
            continue  # catch_warnings resets the registry: keep Python's once per line
        shown.add(key)
        if frame is None:
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
        else:
            warnings.warn_explicit(
                warning.message,
                warning.category,
                frame.f_code.co_filename,
                frame.f_lineno,
                module=frame.f_globals.get("__name__"),
                registry=frame.f_globals.setdefault("__warningregistry__", {}),
            )
    return result


def _always(warning: warnings.WarningMessage, frame: FrameType | None) -> bool:
    """Whether the warning filters say "always" for this warning at the user's line."""
    text = str(warning.message)
    module = frame.f_globals.get("__name__", "") if frame is not None else ""
    lineno = frame.f_lineno if frame is not None else 0
    for action, message, category, module_re, line in warnings.filters:
        if (
            (message is None or message.match(text))
            and issubclass(warning.category, category)
            and (module_re is None or module_re.match(module))
            and line in (0, lineno)
        ):
            return bool(action == "always")
    return bool(warnings.defaultaction == "always")  # type: ignore[attr-defined]


def frameless(error: BaseException) -> BaseException:
    """A copy of ``error`` (same type, args, message and attributes) without its traceback,
    cause or context, whose frames would keep the locals of every frame it passed through
    (a model, its data) alive as long as the copy is kept. ``error`` itself is not touched:
    it is the user's, still propagating. No code of the user's class runs (an ``__init__``
    with required arguments or side effects): a class of theirs is made by its builtin
    base, its attributes copied over."""
    kind = type(error)
    copy: BaseException | None = None
    if not _user_made(kind):
        with contextlib.suppress(Exception):
            copy = kind(*error.args)
            if type(copy) is not kind:
                copy = None
    if copy is None:
        base: Any = next(k for k in kind.__mro__ if k.__module__ == "builtins")
        try:
            copy = base.__new__(kind, *error.args)
            copy.args = error.args
        except Exception:  # noqa: BLE001  (never raise over the user's error)
            return RuntimeError(f"{kind.__name__}: {error_text(error, UNPRINTABLE)}")
        with contextlib.suppress(Exception):
            base.__init__(copy, *error.args)
    with contextlib.suppress(Exception):
        copy.__dict__.update(
            (key, value)
            for key, value in vars(error).items()
            if not isinstance(value, (TracebackType, FrameType))
        )
    copy.__traceback__ = None
    return copy


def _user_made(kind: type[BaseException]) -> bool:
    """Whether making a ``kind`` runs Python code (an ``__init__`` or ``__new__`` of a
    class above the builtin exception it derives from)."""
    for cls in kind.__mro__:
        if cls.__module__ == "builtins":
            return False
        if "__init__" in vars(cls) or "__new__" in vars(cls):
            return True
    return False
