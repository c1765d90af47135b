"""Reading the user's source for what a frame cannot tell.

Which names a line assigns or reads, whether a call leaves an argument at its default,
where a function returns or first writes its argument in place. Parsed with :mod:`ast`,
only when a finding needs it.
"""

from __future__ import annotations

import itertools
import textwrap
import weakref
from types import CodeType
from typing import Any

from gradprobe._recorder.events import SourceLine

_NEAR_LINES = 3


def _just_after(exit_line: SourceLine | None, line: SourceLine | None) -> bool:
    """``line`` follows ``exit_line`` closely in the same function: the values that left
    torch there are most likely what comes back here."""
    if exit_line is None or line is None:
        return False
    if exit_line[0] != line[0] or exit_line[2] != line[2]:
        return False
    distance = line[1] - exit_line[1]
    if distance == 0:
        return True
    if not 0 < distance <= _NEAR_LINES:
        return False
    # `d = np.diff(x.detach().numpy())` then `torch.from_numpy(d)`: a name assigned there
    # is read here (a batch loaded from numpy nearby is not the logged value)
    return bool(_names_at(exit_line, store=True) & _names_at(line, store=False))


def _names_at(line: SourceLine, *, store: bool) -> frozenset[str]:
    """Names a one-line statement assigns (``store``) or reads; empty when it is not one."""
    import ast
    import linecache

    text = linecache.getline(line[0], line[1]).strip()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return frozenset()
    wanted = ast.Store if store else ast.Load
    return frozenset(
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, wanted)
    )


def _defaults_training(line: SourceLine, name: str) -> bool:
    """Whether the ``name(...)`` call on ``line`` leaves ``training`` at its default: no
    ``training=`` keyword and no third positional argument (``F.dropout(x, p, training)``)."""
    import ast
    import linecache

    try:
        tree = ast.parse(linecache.getline(line[0], line[1]).strip())
    except SyntaxError:
        return False
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) == name
    ]
    return bool(calls) and all(
        len(call.args) < 3
        and not any(k.arg in ("training", None) for k in call.keywords)  # None: **kwargs
        for call in calls
    )


_returns: dict[CodeType, SourceLine | None] = {}


def _inplace_line(function: Any) -> SourceLine | None:
    """The first line of ``function`` that writes to its first argument in place
    (``grad.mul_(k)``, ``grad *= k``, ``grad[i] = v``); else its return line."""
    code = getattr(function, "__code__", None)
    first = 1 if getattr(function, "__self__", None) is not None else 0  # a bound method
    if not isinstance(code, CodeType) or code.co_argcount < first + 1:
        return _return_line(function)
    import ast
    import inspect

    argument = code.co_varnames[first]
    try:
        lines, start = inspect.getsourcelines(code)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return _return_line(function)
    hits: list[int] = []
    for node in ast.walk(tree):
        target: ast.AST | None = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr = node.func.attr
            if attr.endswith("_") and not attr.endswith("__"):
                target = node.func.value
        elif isinstance(node, ast.AugAssign):
            target = node.target
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
            target = node.targets[0].value
        if isinstance(target, ast.Name) and target.id == argument:
            hits.append(getattr(node, "lineno", 1))
    if not hits:
        return _return_line(function)
    return (code.co_filename, start + min(hits) - 1, code.co_name)


def _return_line(function: Any) -> SourceLine | None:
    """Where ``function`` returns a value, when it does so at one place; else its def line."""
    code = getattr(function, "__code__", None)
    if not isinstance(code, CodeType):
        return None
    if code not in _returns:
        import ast
        import inspect

        line = code.co_firstlineno
        try:
            lines, start = inspect.getsourcelines(code)
            tree = ast.parse(textwrap.dedent("".join(lines)))
            found = [
                node.lineno
                for node in ast.walk(tree)
                if isinstance(node, ast.Return) and node.value is not None
            ]
            if len(found) == 1:
                line = start + found[0] - 1
        except (OSError, TypeError, SyntaxError):
            pass
        _returns[code] = (code.co_filename, line, code.co_name)
    return _returns[code]


def _decorator_line(frame: Any, name: str) -> SourceLine | None:
    """When ``frame`` is torch's wrapper of a function decorated with a grad-mode context
    (``@torch.no_grad()``, ``@torch.inference_mode()``), the decorator's line in the user's
    source: the line to change, where the call site is only where it took effect."""
    import linecache

    from gradprobe._source import is_user_file

    if frame is None or frame.f_code.co_name != "decorate_context":
        return None
    function = frame.f_locals.get("func")
    code = getattr(function, "__code__", None)
    if not isinstance(code, CodeType) or not is_user_file(code.co_filename):
        return None
    first = code.co_firstlineno  # a decorated function's first line is its first decorator
    for number in range(first, first + 20):
        text = linecache.getline(code.co_filename, number).strip()
        if text.startswith("@") and name in text:
            return (code.co_filename, number, code.co_name)
        if text.startswith(("def ", "async def ")):
            break
    return (code.co_filename, first, code.co_name)


def _def_line(code: CodeType) -> SourceLine:
    """The ``def`` line of a function (its code's first line is its first decorator's)."""
    import linecache

    first = code.co_firstlineno
    for number in range(first, first + 20):
        text = linecache.getline(code.co_filename, number).lstrip()
        if text.startswith(("def ", "async def ")):
            return (code.co_filename, number, code.co_name)
    return (code.co_filename, first, code.co_name)


_DISCARDING: weakref.WeakKeyDictionary[CodeType, frozenset[int]] = weakref.WeakKeyDictionary()
_CALLS = frozenset(("CALL", "CALL_KW", "CALL_FUNCTION", "CALL_METHOD", "CALL_FUNCTION_KW"))


def _result_discarded(frame: Any) -> bool:
    """Whether the call ``frame`` is making has its result thrown away: a call followed by
    POP_TOP, an expression statement (`x.clamp(0, 1)` on its own line)."""
    code = frame.f_code
    offsets = _DISCARDING.get(code)
    if offsets is None:
        import dis

        found = set()
        instructions = list(dis.get_instructions(code))
        for call, after in itertools.pairwise(instructions):
            if call.opname in _CALLS and after.opname == "POP_TOP":
                found.add(call.offset)
        offsets = _DISCARDING[code] = frozenset(found)
    return frame.f_lasti in offsets


# tensor methods that use a tensor's values (a gradient mistaken for its parameter)
_VALUE_USES = frozenset(
    [
        "detach",
        "to",
        "clone",
        "mul",
        "mul_",
        "add",
        "add_",
        "div",
        "div_",
        "sub",
        "sub_",
        "clamp",
        "clamp_",
        "copy_",
        "norm",
        "abs",
        "sum",
        "mean",
        "float",
        "double",
        "half",
        "cpu",
        "cuda",
        "sign",
        "sign_",
        "pow",
        "neg",
        "zero_",
        "fill_",
        "lerp_",
        "addcmul_",
    ]
)


def _uses_argument_as_gradient(function: Any) -> SourceLine | None:
    """For a ``register_post_accumulate_grad_hook`` hook: the first line that uses its
    argument's values as if it were the gradient (``grad.detach()``, ``g * 0.5``, a
    ``torch`` call on it) while the hook never reads ``<arg>.grad``; None otherwise."""
    import ast
    import inspect

    code = getattr(function, "__code__", None)
    if not isinstance(code, CodeType) or code.co_argcount < 1:
        return None
    try:
        lines, start = inspect.getsourcelines(code)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return None
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.FunctionDef | ast.Lambda):
        return None
    name = code.co_varnames[0]
    first: int | None = None
    for item in ast.walk(node):
        if isinstance(item, ast.Attribute) and isinstance(item.value, ast.Name):
            if item.value.id != name:
                continue
            if item.attr == "grad":
                return None  # reads the gradient from the parameter: understood
            if item.attr in _VALUE_USES and (first is None or item.lineno < first):
                first = item.lineno
        elif isinstance(item, ast.BinOp | ast.AugAssign):
            operands = (item.left, item.right) if isinstance(item, ast.BinOp) else (item.value,)
            if any(isinstance(o, ast.Name) and o.id == name for o in operands) and (
                first is None or item.lineno < first
            ):
                first = item.lineno
    if first is None:
        return None
    return (code.co_filename, start + first - 1, code.co_name)
