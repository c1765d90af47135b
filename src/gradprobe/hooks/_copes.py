"""Whether a full backward hook copes with ``None`` in ``grad_input`` (GP303).

The first layer of a network gets ``grad_input == (None,)``: its input is the data batch.
A hook that never reads ``grad_input``, or that compares what it reads with ``None``, is
fine with that, and reporting it would be noise. A hook that reads ``grad_input`` without
such a check is worth a note even when it did not fail this time (it may store the
``None`` for later code to trip on). Decided from the hook's source; when the source
cannot be read, the hook is assumed not to cope.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any

__all__ = ["copes_with_none"]


def copes_with_none(hook: Any) -> bool:
    """True when ``hook(module, grad_input, grad_output)`` provably never reads
    ``grad_input`` or checks it against ``None``."""
    name = _grad_input_name(hook)
    function = _function_node(hook)
    if name is None or function is None:
        return False
    body = function.body if isinstance(function.body, list) else [function.body]
    reads = [
        node
        for statement in body
        for node in ast.walk(statement)
        if isinstance(node, ast.Name) and node.id == name
    ]
    if not reads:
        return True
    return any(
        isinstance(node, ast.Compare)
        and any(isinstance(op, ast.Is | ast.IsNot) for op in node.ops)
        and any(isinstance(c, ast.Constant) and c.value is None for c in node.comparators)
        for statement in body
        for node in ast.walk(statement)
    )


def _grad_input_name(hook: Any) -> str | None:
    try:
        parameters = list(inspect.signature(hook).parameters.values())
    except (TypeError, ValueError):
        return None
    positional = [
        p
        for p in parameters
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    if len(positional) < 2:
        return None  # *args: cannot tell which name holds grad_input
    return positional[1].name


def _function_node(hook: Any) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | None:
    function = getattr(hook, "__func__", hook)  # a bound method
    code = getattr(function, "__code__", None)
    if code is None:
        return None
    try:
        lines, start = inspect.getsourcelines(function)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None  # a lambda in the middle of an expression may not parse alone
    offset = code.co_firstlineno - start + 1  # the function's line within the parsed text
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == code.co_name:
            return node
        if isinstance(node, ast.Lambda) and code.co_name == "<lambda>" and node.lineno == offset:
            return node
    return None
