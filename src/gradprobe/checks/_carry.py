"""Where a loop stores the state it carries into its next iteration (GP103).

When a backward fails because it reached last iteration's freed graph, the recorder knows
the line that *used* the old value (``out, h_n = model(x, hidden)``). The line to change is
usually the one that *stored* it for the next iteration (``hidden = h_n``,
``memory.append(z)``): detaching there fixes every later use. This reads the loop around
the use line and looks for it.
"""

from __future__ import annotations

import ast
import linecache
from collections.abc import Iterator
from dataclasses import dataclass

from gradprobe._recorder import SourceLine

__all__ = ["Carry", "cached_at", "carrier"]

_GROWS = frozenset({"append", "extend", "insert", "appendleft"})


@dataclass(frozen=True)
class Carry:
    """The statement that keeps a value for the next iteration."""

    line: SourceLine
    use: SourceLine  # where the carried value is read
    name: str  # the variable carried
    fix: str  # the statement, storing a detached value


def carrier(use: SourceLine | None) -> Carry | None:
    """The statement that stores, later in the same loop, a name read at ``use``; None
    unless exactly one name is carried that way."""
    if use is None:
        return None
    loop = _loop_around(use)
    if loop is None:
        return None
    statement = _statement_at(loop, use[1])
    if statement is None:
        return None
    read = {
        n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    made_before = _stored(loop, until=statement.lineno)
    found: dict[str, tuple[int, str]] = {}
    for node in ast.walk(loop):
        line = getattr(node, "lineno", 0)
        if line <= (statement.end_lineno or statement.lineno):
            continue
        for name, fix in _carries(node):
            if name in read and name not in made_before and line < found.get(name, (line + 1,))[0]:
                found[name] = (line, fix)
    if len(found) != 1:
        return None
    ((name, (line, fix)),) = found.items()
    return Carry((use[0], line, use[2]), use, name, fix)


def _loop_around(use: SourceLine) -> ast.For | ast.While | None:
    lines = linecache.getlines(use[0])
    if not lines:
        return None
    try:
        tree = ast.parse("".join(lines))
    except SyntaxError:
        return None
    best: ast.For | ast.While | None = None
    for node in ast.walk(tree):
        if not isinstance(node, ast.For | ast.While) or not _spans(node, use[1]):
            continue
        if best is None or node.lineno > best.lineno:  # the innermost loop
            best = node
    return best


def _spans(node: ast.stmt, line: int) -> bool:
    return node.lineno <= line <= (node.end_lineno or node.lineno)


def _statement_at(loop: ast.For | ast.While, line: int) -> ast.stmt | None:
    for node in ast.walk(loop):
        if not isinstance(node, ast.stmt) or isinstance(node, ast.For | ast.While | ast.If):
            continue
        if node is not loop and _spans(node, line):
            return node
    return None


def _stored(loop: ast.For | ast.While, until: int) -> set[str]:
    """Names the loop assigns before line ``until`` (fresh each iteration)."""
    names: set[str] = set()
    if isinstance(loop, ast.For):
        names |= {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    for node in ast.walk(loop):
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.lineno < until:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def _carries(node: ast.AST) -> Iterator[tuple[str, str]]:
    """Names a statement stores new values into, with the statement storing a detached
    value instead: ``n = v`` (unless made only from ``n`` itself, such as ``n = n[-4:]``),
    ``n += v``, ``n.append(v)``."""
    if isinstance(node, ast.Assign):
        value = ast.unparse(node.value)
        sources = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
        for target in node.targets:
            for name in (n.id for n in ast.walk(target) if isinstance(n, ast.Name)):
                if sources - {name}:
                    yield (
                        name,
                        (
                            f"{ast.unparse(target)} = {_detached(node.value)}; for a tuple such "
                            f"as an LSTM's (h, c): tuple(t.detach() for t in {value})"
                        ),
                    )
    elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        operator = ast.unparse(ast.BinOp(ast.Name("a"), node.op, ast.Name("b")))[2:-2]
        yield (
            node.target.id,
            (f"{node.target.id} {operator}= {_detached(node.value)}, or .item() for a number"),
        )
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _GROWS
        and isinstance(node.func.value, ast.Name)
        and node.args
    ):
        args = [ast.unparse(a) for a in node.args[:-1]] + [_detached(node.args[-1])]
        yield node.func.value.id, f"{node.func.value.id}.{node.func.attr}({', '.join(args)})"


def _detached(value: ast.expr) -> str:
    text = ast.unparse(value)
    simple = isinstance(value, ast.Name | ast.Attribute | ast.Subscript | ast.Call)
    return f"{text}.detach()" if simple else f"({text}).detach()"


def cached_at(made: SourceLine | None) -> SourceLine | None:
    """Where the function that made a value at ``made`` keeps it on an object for later
    calls: ``self._cache[n] = (cos, sin)``, ``self.mask = mask``, ``CACHE[key] = emb``. A
    value kept that way carries its graph into every later iteration."""
    if made is None:
        return None
    try:
        tree = ast.parse("".join(linecache.getlines(made[0])))
    except SyntaxError:
        return None
    function = None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and _spans(node, made[1])
            and (function is None or node.lineno > function.lineno)
        ):
            function = node
    if function is None:
        return None
    names: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and _spans(node, made[1]):
            for target in node.targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    if not names:
        return None
    for node in ast.walk(function):
        if not isinstance(node, ast.Assign) or node.lineno <= made[1]:
            continue
        kept = any(isinstance(t, ast.Subscript | ast.Attribute) for t in node.targets)
        reads = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
        if kept and reads & names:
            return (made[0], node.lineno, made[2])
    return None
