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
line, raised inside the engine         earlier (the caller may know the node's line)
=====================================  =========================================================
"""

from __future__ import annotations

import ast
import difflib
import functools
import linecache
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import FrameType, GeneratorType, TracebackType
from typing import Any

import torch

from gradprobe._patch import WRAPPED_ATTR
from gradprobe._recorder import NodeKey, SourceLine
from gradprobe._recorder.events import NodeRecord
from gradprobe._source import is_user_file
from gradprobe._tracebacks import raised_in_torch
from gradprobe.hooks._names import frame_variables

__all__ = [
    "Blame",
    "blame",
    "empty_line",
    "function_at",
    "function_line",
    "group_line",
    "helper_return",
    "hook_return_line",
    "last_return",
    "made_line",
    "missing_method_line",
    "named_values",
    "parsed",
    "provenance",
    "raised_by_torch",
    "return_of",
    "returned_line",
    "running_function",
    "traceback_frame",
]

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
    # a backward() whose graph the engine was walking: what it refused was built earlier
    # (refused before the engine started, its arguments were wrong: the call is the cause)
    if own or (in_engine and any(hands(call) >= 0 for call in _HANDS_TO_ENGINE)):
        return Blame(None, error, "", in_engine, own)
    return Blame(error, error, "torch refused this call", in_engine, False)


def traceback_frame(tb: TracebackType | None, line: SourceLine) -> FrameType | None:
    """The frame of traceback ``tb`` that was at ``line`` when it raised (innermost)."""
    found = None
    while tb is not None:
        if (tb.tb_frame.f_code.co_filename, tb.tb_lineno) == line[:2]:
            found = tb.tb_frame
        tb = tb.tb_next
    return found


def raised_by_torch(error: BaseException) -> bool:
    """Whether torch raised ``error`` (by origin and type, never by its text): a type of
    Python's or torch's, raised inside torch or by C code a frame called, not by a
    ``raise`` of the user's own (:func:`gradprobe._tracebacks.raised_in_torch`)."""
    module = type(error).__module__
    if module != "builtins" and module.split(".")[0] != "torch":
        return False
    if isinstance(error, _PYTHONS) and blame(error.__traceback__).error is not None:
        innermost = error.__traceback__
        while innermost is not None and innermost.tb_next is not None:
            innermost = innermost.tb_next
        if innermost is not None and is_user_file(innermost.tb_frame.f_code.co_filename):
            return False  # `None.data`, a missing key: Python refused the user's line
    return raised_in_torch(error)


# what Python itself raises at a line of the user's (torch's C code raises these rarely)
_PYTHONS = (AttributeError, NameError, KeyError)


def _own(line: SourceLine) -> bool:
    return _source(line).lstrip().startswith(_OWN_RAISE)


def _source(line: SourceLine) -> str:
    return linecache.getline(line[0], line[1])


# -- the custom Function backward() was running -----------------------------------------------

_FUNCTION_PY = "torch/autograd/function.py"


def running_function(tb: TracebackType | None) -> Any | None:
    """The node of the Python ``autograd.Function`` the engine was running when traceback
    ``tb`` raised (torch's own, like a reentrant checkpoint, or the user's), innermost."""
    found = None
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_name in ("apply", "apply_boxed") and frame.f_code.co_filename.replace(
            "\\", "/"
        ).endswith(_FUNCTION_PY):
            node = frame.f_locals.get("self")
            if node is not None and hasattr(node, "_forward_cls"):
                found = node
        tb = tb.tb_next
    return found


def function_line(
    node: Any, applied: Mapping[NodeKey, SourceLine], nodes: Mapping[NodeKey, NodeRecord]
) -> SourceLine | None:
    """Where the recorded forward made ``node``: the user's line that called its ``apply``
    (a ``checkpoint(...)`` call), else where an op first used it; None when unrecorded."""
    try:
        key = (node.name(), node._sequence_nr())
    except (AttributeError, RuntimeError):
        return None
    if key in applied:
        return applied[key]
    record = nodes.get(key)
    return record.line if record is not None else None


def missing_method_line(node: Any, wanted: str = "backward") -> SourceLine | None:
    """For a Function without ``wanted`` (its ``backward``): a method of its class whose name
    is a near miss (``backwards``, ``backard``), else the ``class`` line, in the user's code
    (found from its ``forward``'s code, which knows its file even for ``__main__``)."""
    cls = getattr(node, "_forward_cls", None)
    forward = getattr(getattr(cls, "forward", None), "__code__", None)
    if not isinstance(cls, type) or forward is None or not is_user_file(forward.co_filename):
        return None
    tree = parsed(forward.co_filename)
    if tree is None:
        return None
    for klass in ast.walk(tree):
        if (
            isinstance(klass, ast.ClassDef)
            and klass.name == cls.__name__
            and klass.lineno <= forward.co_firstlineno <= (klass.end_lineno or klass.lineno)
        ):
            methods = {
                f.name: f.lineno
                for f in klass.body
                if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name != wanted
            }
            near = difflib.get_close_matches(wanted, list(methods), n=1, cutoff=0.75)
            line = methods[near[0]] if near else klass.lineno
            return (forward.co_filename, line, cls.__name__)
    return None


def hook_return_line(tb: TracebackType | None) -> SourceLine | None:
    """The last ``return`` of the user's hook that torch's hook machinery was running when
    traceback ``tb`` raised (a local named like ``user_hook`` in torch's frame): torch checks
    what a hook returned after it returned, so the hook itself is not on the traceback."""
    found = None
    while tb is not None:
        frame = tb.tb_frame
        if not is_user_file(frame.f_code.co_filename):
            for name, value in list(frame.f_locals.items()):
                for _ in range(4):  # gradprobe's own hook wrappers keep the user's hook
                    value = getattr(value, WRAPPED_ATTR, value)
                code = getattr(value, "__code__", None)
                if "hook" in name and code is not None and is_user_file(code.co_filename):
                    found = code
        tb = tb.tb_next
    if found is None:
        return None
    returned = last_return(found.co_filename, found.co_firstlineno)
    return (found.co_filename, returned, found.co_name) if returned is not None else None


# -- the line an entry's blame rule names ------------------------------------------------------

# which tensor named on the raising line an entry blames on where it was made: "made", a
# computed (non-leaf) one given where a leaf is expected; "plain", one that requires no grad;
# "argument", any tensor (or parameter group) it names: where that argument was built; "view",
# a view of another tensor: where the view was taken
_WANTED: dict[str, Callable[[torch.Tensor], bool]] = {
    "made": lambda tensor: tensor.grad_fn is not None,
    "plain": lambda tensor: not tensor.requires_grad,
    "argument": lambda tensor: True,
    "view": lambda tensor: tensor._is_view(),
}


def provenance(
    rule: str, frame: FrameType, line: int, nodes: Mapping[NodeKey, NodeRecord]
) -> SourceLine | None:
    """The line a catalogue entry's blame ``rule`` names, from ``line`` of ``frame`` (the
    user's line torch raised or warned at); None when the rule finds nothing there."""
    if rule in _WANTED:
        made = made_line(frame, line, _WANTED[rule], nodes)
        if made is None and rule == "argument":  # [group_a, group_b]: where each was built
            made = group_line(frame, line)
        return made
    if rule == "function":
        return returned_line(frame, line)
    if rule == "gradcheck":  # float32 inputs fail any formula; else the formula is wrong
        coarse = made_line(frame, line, _single_precision, nodes)
        return coarse if coarse is not None else returned_line(frame, line)
    if rule == "empty":
        return empty_line(frame, line)
    if ":" in rule or rule in ("registered", "pack"):
        from gradprobe.checks._blame_members import member_rule  # it reads this module's

        return member_rule(rule, frame, line)
    return None


def _single_precision(tensor: torch.Tensor) -> bool:
    return tensor.requires_grad and tensor.dtype not in (torch.float64, torch.complex128)


# -- where the tensor a line names was made ----------------------------------------------------

_NAME = re.compile(r"(?<![\w.])[A-Za-z_]\w*")  # a name, not an attribute after a dot


def named_values(frame: FrameType, line: int) -> Iterator[object]:
    """The values of the names ``line`` of ``frame`` reads, in order (attributes after a dot
    left out)."""
    values = dict(frame_variables(frame))
    for name in dict.fromkeys(_NAME.findall(linecache.getline(frame.f_code.co_filename, line))):
        if name in values:
            yield values[name]


def made_line(
    frame: FrameType,
    line: int,
    want: Callable[[torch.Tensor], bool],
    nodes: Mapping[NodeKey, NodeRecord],
) -> SourceLine | None:
    """Where the first tensor named on ``line`` of ``frame`` that ``want`` accepts was made:
    the recorded line of its autograd node, else the statement that last assigned its name
    in that function before ``line`` (a leaf made by ``torch.rand(...)``, ``torch.eye(n)``),
    else, for a parameter of that function, the caller's line that passed it.
    ``w.register_hook(...)`` names ``w``; a list of tensors is looked into."""
    filename = frame.f_code.co_filename
    values = dict(frame_variables(frame))
    for name in dict.fromkeys(_NAME.findall(linecache.getline(filename, line))):
        for tensor in _tensors(values.get(name)):
            if not want(tensor):
                continue
            node = tensor.grad_fn
            record = nodes.get((node.name(), node._sequence_nr())) if node is not None else None
            if record is not None and record.line is not None:
                made: SourceLine = record.line
                return made
            assigned = _last_assignment(filename, frame.f_code.co_name, name, line)
            if assigned is not None:
                return (filename, assigned, frame.f_code.co_name)
            passed = _call_site(frame, name)
            if passed is not None:
                return passed
    return None


def return_of(function: object) -> SourceLine | None:
    """The last ``return`` of ``function`` (anything with a ``__code__``) when it is the
    user's, as a source line; None for torch's own code or a function without one."""
    code = getattr(function, "__code__", None)
    if code is None or not is_user_file(code.co_filename):
        return None
    returned = last_return(code.co_filename, code.co_firstlineno)
    return (code.co_filename, returned, code.co_name) if returned is not None else None


def helper_return(frame: FrameType, made: SourceLine) -> SourceLine | None:
    """When the statement at ``made`` (in ``frame``'s function) binds the result of a call of
    one of the user's functions (``images = load_batch(2)``), that function's last
    ``return``: the value was made there."""
    tree = parsed(made[0])
    if tree is None:
        return None
    values = dict(frame_variables(frame))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign) or node.lineno != made[1]:
            continue
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
            return return_of(values.get(call.func.id))
    return None


def _call_site(frame: FrameType, name: str) -> SourceLine | None:
    """For ``name``, a parameter of ``frame``'s function: the caller's line that passed it
    (a helper given a view made by its caller), when the caller is the user's code."""
    code = frame.f_code
    parameters = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    caller = frame.f_back
    if name not in parameters or caller is None:
        return None
    if not is_user_file(caller.f_code.co_filename):
        return None
    return (caller.f_code.co_filename, caller.f_lineno, caller.f_code.co_name)


def returned_line(frame: FrameType, line: int) -> SourceLine | None:
    """The last ``return`` of the user's function named on ``line`` of ``frame`` (what a
    ``torch.func.grad(f)`` or ``gradcheck(f, ...)`` refused came from there)."""
    values = dict(frame_variables(frame))
    for name in dict.fromkeys(_NAME.findall(linecache.getline(frame.f_code.co_filename, line))):
        function = values.get(name)
        if isinstance(function, type):  # a custom autograd.Function given as X.apply
            function = getattr(function, "backward", None)
        returned = return_of(function)
        if returned is not None:
            return returned
    return None


def group_line(frame: FrameType, line: int) -> SourceLine | None:
    """Where a parameter group (a dict with ``"params"``) named on ``line`` was built."""
    filename = frame.f_code.co_filename
    values = dict(frame_variables(frame))
    for name in dict.fromkeys(_NAME.findall(linecache.getline(filename, line))):
        value = values.get(name)
        if isinstance(value, dict) and "params" in value:
            assigned = _last_assignment(filename, frame.f_code.co_name, name, line)
            if assigned is not None:
                return (filename, assigned, frame.f_code.co_name)
    return None


def empty_line(frame: FrameType, line: int) -> SourceLine | None:
    """Where an empty list, tuple or dict named on ``line`` of ``frame`` was bound (a filter
    that kept nothing), or a generator already used up (``model.parameters()`` bound once
    and iterated before)."""
    filename = frame.f_code.co_filename
    values = dict(frame_variables(frame))
    for name in dict.fromkeys(_NAME.findall(linecache.getline(filename, line))):
        value = values.get(name)
        used_up = isinstance(value, GeneratorType) and value.gi_frame is None
        if used_up or (isinstance(value, (list, tuple, dict)) and not value):
            assigned = _last_assignment(filename, frame.f_code.co_name, name, line)
            if assigned is not None:
                return (filename, assigned, frame.f_code.co_name)
    return None


def last_return(filename: str, first: int) -> int | None:
    """The line of the last ``return`` of the function whose ``def`` is on line ``first``."""
    node = function_at(filename, first)
    if node is None:
        return None
    returns = [s.lineno for s in _statements(node) if isinstance(s, ast.Return)]
    return max(returns) if returns else None


def function_at(filename: str, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The function of ``filename`` whose ``def`` (or a decorator of it) is on ``line``."""
    tree = parsed(filename)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and line in (
            node.lineno,
            *(d.lineno for d in node.decorator_list),
        ):
            return node
    return None


def _tensors(value: object) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value[:64]:
            if isinstance(item, torch.Tensor):
                yield item
            elif isinstance(item, dict):  # an optimizer's parameter group
                yield from _tensors(item.get("params", ()))


def _last_assignment(filename: str, function: str, name: str, before: int) -> int | None:
    """The line of the last statement of ``function`` (the module for ``<module>``) that
    binds ``name`` before line ``before``."""
    tree = parsed(filename)
    if tree is None:
        return None
    scope: ast.AST = tree
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.name == function
            and node.lineno <= before <= (node.end_lineno or node.lineno)
        ):
            scope = node
    found = None
    for statement in _statements(scope):
        if statement.lineno < before and name in _bound(statement):
            found = max(found or 0, statement.lineno)
    return found


def _statements(scope: ast.AST) -> Iterator[ast.stmt]:
    """The statements of ``scope``, nested blocks included, other scopes left out."""
    for child in ast.iter_child_nodes(scope):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(child, ast.stmt):
            yield child
        yield from _statements(child)


def _bound(statement: ast.stmt) -> set[str]:
    targets: list[ast.expr] = []
    if isinstance(statement, ast.Assign):
        targets = list(statement.targets)
    elif isinstance(statement, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        targets = [statement.target]
    elif isinstance(statement, (ast.With, ast.AsyncWith)):
        targets = [item.optional_vars for item in statement.items if item.optional_vars]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


@functools.lru_cache(maxsize=32)
def parsed(filename: str) -> ast.Module | None:
    source = "".join(linecache.getlines(filename))
    try:
        return ast.parse(source) if source else None
    except SyntaxError:
        return None
