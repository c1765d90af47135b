"""Where the user's source writes a learning rate into a param group: ``group["lr"] = ...``
and ``group["lr"] *= ...``, read from the file with :mod:`ast` (no code runs). A write is
*compounding* when the new rate is computed from the old one (``*=``, ``/=``, or a right
side that reads ``["lr"]`` again): done at every step, its factor multiplies up."""

from __future__ import annotations

import ast
import functools
import linecache
from typing import NamedTuple

from gradprobe._recorder import SourceLine

__all__ = ["LrWrite", "calls_to", "lr_writes"]

_KEY = "lr"


class LrWrite(NamedTuple):
    """One statement that stores into ``[...]["lr"]``."""

    line: SourceLine  # (file, line, enclosing function or "<module>")
    compounds: bool


def lr_writes(filename: str) -> tuple[LrWrite, ...]:
    """The writes of ``["lr"]`` in ``filename`` (none if it cannot be read or parsed)."""
    return _writes(filename, len(linecache.getlines(filename)))


@functools.lru_cache(maxsize=64)
def _writes(filename: str, _size: int) -> tuple[LrWrite, ...]:  # _size: a changed file
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return ()
    found: list[LrWrite] = []
    _visit(tree, "<module>", filename, found)
    return tuple(found)


def calls_to(filename: str, name: str) -> tuple[SourceLine, ...]:
    """The lines of ``filename`` that call a function named ``name`` (``name(...)`` or
    ``x.name(...)``), each with its enclosing function."""
    return _calls(filename, name, len(linecache.getlines(filename)))


@functools.lru_cache(maxsize=64)
def _calls(filename: str, name: str, _size: int) -> tuple[SourceLine, ...]:
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return ()
    found: list[SourceLine] = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, child.name)
                continue
            if isinstance(child, ast.Call):
                func = child.func
                called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if called == name:
                    found.append((filename, child.lineno, function))
            visit(child, function)

    visit(tree, "<module>")
    return tuple(found)


def _visit(node: ast.AST, function: str, filename: str, found: list[LrWrite]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _visit(child, child.name, filename, found)
            continue
        if isinstance(child, ast.AugAssign) and _is_lr(child.target):
            compounds = isinstance(child.op, (ast.Mult, ast.Div, ast.Pow))
            found.append(LrWrite((filename, child.lineno, function), compounds))
        elif isinstance(child, ast.Assign) and any(_is_lr(t) for t in child.targets):
            compounds = any(_is_lr(n) for n in ast.walk(child.value))
            found.append(LrWrite((filename, child.lineno, function), compounds))
        _visit(child, function, filename, found)


def _is_lr(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and node.slice.value == _KEY
    )
