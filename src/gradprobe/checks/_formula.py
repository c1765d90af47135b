"""What an ``nn.Parameter(...)`` was built from, read from the source with :mod:`ast`: the
calls its value went through inside the function that made it (a backward slice over the
assignments before that line, following helpers of the same file two levels deep). No code
runs; a line that cannot be read gives nothing."""

from __future__ import annotations

import ast
import functools
import linecache
from typing import NamedTuple

from gradprobe._recorder import SourceLine

__all__ = ["Made", "parameter_made"]

_DEPTH = 2  # helpers of the same file followed into
_STATEMENTS = 400  # statements of one function looked at


class Made(NamedTuple):
    """How the value handed to ``nn.Parameter`` on one line was computed."""

    calls: frozenset[str]  # the called names it went through (the last part: np.sin -> sin)
    explicit: bool  # requires_grad=True written out: training it is the point
    conditional: bool  # made inside an `if` (a learnable/fixed switch)


def parameter_made(line: SourceLine) -> Made | None:
    """The slice of ``nn.Parameter(...)`` at ``line``, or None when that line holds none."""
    return _made(line[0], line[1], len(linecache.getlines(line[0])))


@functools.lru_cache(maxsize=256)
def _made(filename: str, lineno: int, _size: int) -> Made | None:
    tree = _tree(filename, _size)
    if tree is None:
        return None
    found = _enclosing(tree, lineno)
    if found is None:
        return None
    scope, statement, conditional = found
    call = next((c for c in ast.walk(statement) if _is_parameter(c)), None)
    if not isinstance(call, ast.Call):
        return None
    value = call.args[0] if call.args else _keyword(call, "data")
    if value is None:
        return None
    explicit = isinstance(flag := _keyword(call, "requires_grad"), ast.Constant) and bool(
        flag.value
    )
    calls = _slice(tree, scope, statement, value, _DEPTH)
    return Made(frozenset(calls), explicit, conditional)


@functools.lru_cache(maxsize=32)
def _tree(filename: str, _size: int) -> ast.Module | None:
    try:
        return ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return None


def _enclosing(tree: ast.Module, lineno: int) -> tuple[ast.AST, ast.stmt, bool] | None:
    """The innermost function (or the module) holding the statement at ``lineno``, that
    statement, and whether an ``if`` inside that function holds it."""
    scope: ast.AST = tree
    conditional = False
    body: list[ast.stmt] = tree.body
    while True:
        statement = next(
            (s for s in body if s.lineno <= lineno <= (s.end_lineno or s.lineno)), None
        )
        if statement is None:
            return None
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scope, conditional, body = statement, False, statement.body
        elif isinstance(statement, ast.ClassDef):
            body = statement.body
        elif inner := _blocks(statement, lineno):
            conditional |= isinstance(statement, ast.If)
            body = inner
        else:
            return scope, statement, conditional


def _blocks(statement: ast.stmt, lineno: int) -> list[ast.stmt]:
    for name in ("body", "orelse", "finalbody", "handlers"):
        block = getattr(statement, name, None)
        if isinstance(block, list) and any(
            isinstance(s, ast.stmt) and s.lineno <= lineno <= (s.end_lineno or s.lineno)
            for s in block
        ):
            return [s for s in block if isinstance(s, ast.stmt)]
    return []


def _slice(
    tree: ast.Module, scope: ast.AST, stop: ast.stmt, value: ast.expr, depth: int
) -> set[str]:
    """The names of the calls ``value`` and the assignments it reads (in ``scope``, before
    ``stop``) went through."""
    wanted = _names(value)
    calls = _calls(value)
    before = [
        s
        for s in _statements(scope)
        if s.lineno < stop.lineno and isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign))
    ]
    for statement in reversed(before):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        if any(_names(t) & wanted for t in targets):
            wanted |= _names(statement.value) if statement.value else set()
            calls |= _calls(statement.value) if statement.value else set()
            for target in targets:  # pe[:, 0::2] = ...: the slice's names too
                wanted |= _names(target)
    if depth:
        for name in list(calls):
            helper = _function(tree, name)
            if helper is not None:
                for node in ast.walk(helper):
                    if isinstance(node, ast.Return) and node.value is not None:
                        calls |= _slice(tree, helper, node, node.value, depth - 1)
    return calls


def _statements(scope: ast.AST) -> list[ast.stmt]:
    found: list[ast.stmt] = []
    todo = list(getattr(scope, "body", []))
    while todo and len(found) < _STATEMENTS:
        statement = todo.pop(0)
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        found.append(statement)
        for name in ("body", "orelse", "finalbody"):
            todo.extend(s for s in getattr(statement, name, []) if isinstance(s, ast.stmt))
    return sorted(found, key=lambda s: s.lineno)


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    return next(
        (
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef) and node.name == name
        ),
        None,
    )


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id != "self"}


def _calls(node: ast.AST) -> set[str]:
    found: set[str] = set()
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            func = call.func
            if isinstance(func, ast.Attribute):
                found.add(func.attr)
            elif isinstance(func, ast.Name):
                found.add(func.id)
    return found


def _is_parameter(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name == "Parameter"


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)
