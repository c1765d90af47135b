"""Reading the user's source for the filter that chose an optimizer's parameters.

An optimizer built from ``build_param_groups(model)`` (or from a list filled in a loop) got
the parameters a loop over ``model.modules()`` picked by ``isinstance``: a module whose own
Parameters belong to none of the listed layer types is left out, and that test is the line
to change. :func:`type_filter` finds it from the optimizer's line, reading the source only
(nothing is imported or run).
"""

from __future__ import annotations

import ast
import functools
import linecache
import sys
from pathlib import Path

from gradprobe._recorder import SourceLine

__all__ = ["type_filter"]

_WALKS = frozenset(("modules", "named_modules", "children", "named_children"))


def type_filter(optimizer: SourceLine) -> SourceLine | None:
    """The ``if isinstance(...)`` inside a loop over a model's modules that collected the
    parameters given to the optimizer built at ``optimizer``: in a function called on that
    line, or in the same scope for a list named there."""
    file, number, _ = optimizer
    tree = _parse(file)
    if tree is None:
        return None
    statement = _statement_at(tree, number)
    if statement is None:
        return None
    called = {
        node.func.id
        for node in ast.walk(statement)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    for name in sorted(called):
        found = _function(file, tree, name)
        if found is not None:
            where, function = found
            line = _first_filter(function, None)
            if line is not None:
                return (where, line, function.name)
    named = {
        node.id
        for node in ast.walk(statement)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }
    scope = _scope_of(tree, number)
    line = _first_filter(scope, named, before=number) if named else None
    if line is not None:
        return (file, line, getattr(scope, "name", "<module>"))
    return None


def _first_filter(scope: ast.AST, names: set[str] | None, before: int | None = None) -> int | None:
    """The first ``if isinstance(...)`` directly in the body of a loop over ``.modules()``
    (or its kin) in ``scope``; with ``names``, only in a loop whose body adds to one of
    them."""
    for node in ast.walk(scope):
        if not (isinstance(node, ast.For) and _walks_modules(node.iter)):
            continue
        if before is not None and node.lineno > before:
            continue
        if names is not None and not _mentions(node, names):
            continue
        for inner in node.body:
            if isinstance(inner, ast.If) and _is_isinstance(inner.test):
                return inner.lineno
    return None


def _walks_modules(expr: ast.expr) -> bool:
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr in _WALKS
    )


def _is_isinstance(test: ast.expr) -> bool:
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "isinstance"
        for node in ast.walk(test)
    )


def _mentions(loop: ast.For, names: set[str]) -> bool:
    return any(isinstance(node, ast.Name) and node.id in names for node in ast.walk(loop))


def _statement_at(tree: ast.Module, number: int) -> ast.stmt | None:
    best: ast.stmt | None = None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.stmt)
            and not hasattr(node, "body")
            and node.lineno <= number <= (node.end_lineno or node.lineno)
        ):
            best = node
    return best


def _scope_of(tree: ast.Module, number: int) -> ast.AST:
    """The innermost function holding line ``number``, or the module."""
    scope: ast.AST = tree
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.lineno <= number <= (node.end_lineno or node.lineno)
            and node.lineno >= getattr(scope, "lineno", 0)
        ):
            scope = node
    return scope


def _function(
    file: str, tree: ast.Module, name: str
) -> tuple[str, ast.FunctionDef | ast.AsyncFunctionDef] | None:
    """The definition of ``name`` in ``file``, or in the module ``file`` imports it from
    (imports and definitions inside functions too: a script whose body is ``main()``)."""
    local = _definition(tree, name)
    if local is not None:
        return file, local
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.module is None or node.level:
            continue
        if any(alias.name == name and alias.asname is None for alias in node.names):
            other = _module_file(node.module, file)
            other_tree = _parse(other) if other is not None else None
            found = _definition(other_tree, name) if other_tree is not None else None
            return (other, found) if other is not None and found is not None else None
    return None


def _definition(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            return node
    return None


def _module_file(module: str, importer: str) -> str | None:
    loaded = sys.modules.get(module)
    path = getattr(loaded, "__file__", None)
    if isinstance(path, str):
        return path
    beside = Path(importer).parent.joinpath(*module.split(".")).with_suffix(".py")
    return str(beside) if beside.is_file() else None


def _parse(file: str) -> ast.Module | None:
    return _parsed("".join(linecache.getlines(file)))


@functools.lru_cache(maxsize=16)
def _parsed(source: str) -> ast.Module | None:
    if not source:
        return None
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None
