"""What makes a function give another result when it runs again: the line a checkpointed
function's recomputation diverges by (GP155). Read from the source, not from a run: a
statement that changes state the function reads on its next call (``self.calls += 1``, a
``global``), or a draw from a random source checkpoint does not replay (Python's ``random``,
NumPy's ``np.random``; torch's own generator is replayed when ``preserve_rng_state`` is on),
or a clock. Functions of the user's it calls are looked into, two calls deep."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator

from gradprobe._recorder import SourceLine
from gradprobe._source import is_user_file
from gradprobe.checks._blame import function_at, parsed

__all__ = ["impure_line"]

_UNREPLAYED = ("random", "np.random", "numpy.random", "time", "datetime")
_DEPTH = 2


def impure_line(function: SourceLine) -> SourceLine | None:
    """The first line of the function defined at ``function`` (file, def line, name), or of a
    user function it calls, that makes a second run differ from the first; None if none."""
    return _search(function[0], function[1], _DEPTH)


def _search(filename: str, line: int, depth: int) -> SourceLine | None:
    node = function_at(filename, line)
    if node is None:
        return None
    callees: list[str] = []
    local = _locals(node)
    for statement in _walk(node):
        if _changes_state(statement, local) or _draws(statement):
            return (filename, statement.lineno, node.name)
        callees += [name for name in _called_names(statement) if name not in callees]
    if depth <= 0:
        return None
    for name in callees:
        where = _defined(filename, name)
        if where is not None and is_user_file(where[0]):
            found = _search(where[0], where[1], depth - 1)
            if found is not None:
                return found
    return None


def _defined(filename: str, name: str) -> tuple[str, int] | None:
    """Where function ``name``, called in ``filename``, is defined: a ``def`` of that file, or
    the module a ``from x import name`` of that file names (when it is imported)."""
    tree = parsed(filename)
    if tree is None:
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            return (filename, node.lineno)
    for imported in ast.walk(tree):
        if (
            isinstance(imported, ast.ImportFrom)
            and imported.module
            and imported.level == 0
            and any((alias.asname or alias.name) == name for alias in imported.names)
        ):
            module = sys.modules.get(imported.module)
            code = getattr(getattr(module, name, None), "__code__", None)
            if code is not None:
                return (code.co_filename, code.co_firstlineno)
    return None


def _walk(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.stmt]:
    """The function's statements in source order, nested blocks included."""
    for node in ast.walk(function):
        if isinstance(node, ast.stmt) and node is not function:
            yield node


def _changes_state(statement: ast.stmt, local: set[str]) -> bool:
    """A write that outlives the call: to ``self.x``, or into an object the function did not
    make (``state["n"] += 1`` on a global dict, ``cache.append`` is not counted)."""
    if isinstance(statement, ast.Global | ast.Nonlocal):
        return True
    targets: list[ast.expr] = []
    if isinstance(statement, ast.Assign):
        targets = list(statement.targets)
    elif isinstance(statement, ast.AugAssign | ast.AnnAssign):
        targets = [statement.target]
    for target in targets:
        if not isinstance(target, ast.Attribute | ast.Subscript):
            continue
        root = _root(target)
        if root is not None and (root == "self" or root not in local):
            return True
    return False


def _root(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _locals(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The function's parameters and the names it binds (not ``self``: its state outlives
    the call)."""
    names = {a.arg for a in (*function.args.posonlyargs, *function.args.args)}
    names |= {a.arg for a in function.args.kwonlyargs}
    names |= {
        n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    names.discard("self")
    return names


def _draws(statement: ast.stmt) -> bool:
    """A call like ``random.randint(...)`` or ``np.random.rand(...)`` in the statement itself
    (not in a nested block's statements, which the walk visits on their own)."""
    for node in _own_expressions(statement):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = _dotted(node.func.value)
            if owner is not None and owner in _UNREPLAYED:
                return True
    return False


def _called_names(statement: ast.stmt) -> Iterator[str]:
    """Plain names called in the statement: ``random_crop(x)``, not ``self.fc(x)``."""
    for node in _own_expressions(statement):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            yield node.func.id


def _own_expressions(statement: ast.stmt) -> Iterator[ast.AST]:
    for field in ("value", "test", "iter", "targets", "target", "items", "exc"):
        child = getattr(statement, field, None)
        for part in child if isinstance(child, list) else [child]:
            if isinstance(part, ast.AST):
                yield from ast.walk(part)


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        owner = _dotted(node.value)
        return f"{owner}.{node.attr}" if owner is not None else None
    return None
