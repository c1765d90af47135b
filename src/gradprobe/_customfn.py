"""Two silent mistakes in custom ``torch.autograd.Function`` s, seen by the recorder.

* **A tensor kept on ctx** (``ctx.x = x`` instead of ``ctx.save_for_backward(x)``): autograd
  never checks its version, so an in-place write between forward and backward makes the
  backward compute with the new values and no error says so (GP129). :func:`ctx_tensors`
  notes each tensor attribute of the node (the node is the ctx) when the recorder first
  sees it; a node pre-hook compares the versions just before the backward runs.
* **A backward that never reads its incoming gradient** (``return 2 * x`` for
  ``grad_output * 2 * x``): right only when the gradient arriving is all ones, wrong by the
  chain rule everywhere else (GP128). :func:`ignores_grad_outputs` reads the backward's
  source once per Function class: none of its gradient parameters is ever read.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any

import torch

from gradprobe._source import is_user_file

__all__ = ["ctx_store_line", "ctx_tensors", "ignores_grad_outputs"]

_blind: dict[Any, bool] = {}


def ctx_tensors(node: Any) -> dict[str, tuple[torch.Tensor, int]]:
    """The tensors stored as attributes of a custom Function's ctx, with their versions.
    Only for reading versions at once: the caller must not keep the tensors."""
    found: dict[str, tuple[torch.Tensor, int]] = {}
    try:
        attributes = vars(node)
    except TypeError:
        return found
    for name, value in attributes.items():
        items = value if type(value) in (tuple, list) else (value,)
        for index, item in enumerate(items):
            if type(item) is torch.Tensor or type(item) is torch.nn.Parameter:
                try:
                    version = item._version
                except RuntimeError:  # inference tensors have no version counter
                    continue
                slot = name if item is value else f"{name}[{index}]"
                found[slot] = (item, version)
    return found


def ignores_grad_outputs(function: type) -> bool:
    """True when ``function.backward`` has gradient parameters and reads none of them."""
    backward = inspect.unwrap(getattr(function, "backward", None) or _none)
    code = getattr(backward, "__code__", None)
    if code is None or not is_user_file(code.co_filename):  # torch's own Functions
        return False
    if code in _blind:
        return _blind[code]
    _blind[code] = blind = _reads_no_gradient(backward)
    return blind


def _reads_no_gradient(backward: Any) -> bool:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(backward)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return False
    function = tree.body[0] if tree.body else None
    if not isinstance(function, ast.FunctionDef):
        return False
    arguments = function.args
    names = [a.arg for a in (*arguments.posonlyargs, *arguments.args)][1:]  # after ctx
    if arguments.vararg is not None:
        names.append(arguments.vararg.arg)
    if not names:
        return False
    read = {
        node.id
        for node in ast.walk(function)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }
    calls_locals = any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("locals", "vars", "eval", "exec")
        for node in ast.walk(function)
    )
    return not calls_locals and not read.intersection(names)


def ctx_store_line(function: type, slot: str) -> tuple[str, int, str] | None:
    """Where ``forward`` (or ``setup_context``) assigns ``ctx.<attr>``: file, line, name."""
    attr = slot.partition("[")[0]
    for method in ("setup_context", "forward"):
        code = getattr(inspect.unwrap(getattr(function, method, None) or _none), "__code__", None)
        if code is None or not is_user_file(code.co_filename):
            continue
        try:
            lines, start = inspect.getsourcelines(code)
            tree = ast.parse(textwrap.dedent("".join(lines)))
        except (OSError, TypeError, SyntaxError, IndentationError):
            continue
        for node in ast.walk(tree):
            targets: list[ast.expr] = []
            if not isinstance(node, ast.stmt):
                continue
            if isinstance(node, ast.Assign):
                targets = [t for target in node.targets for t in _flat(target)]
            elif isinstance(node, ast.AnnAssign | ast.AugAssign):
                targets = [node.target]
            if any(isinstance(t, ast.Attribute) and t.attr == attr for t in targets):
                return (code.co_filename, start + node.lineno - 1, code.co_name)
    return None


def _flat(target: ast.expr) -> list[ast.expr]:
    if isinstance(target, ast.Tuple | ast.List):
        return [t for item in target.elts for t in _flat(item)]
    return [target]


def _none() -> None:
    return None
