"""Blame rules that read the user's source around what the raising line names: the
``ctx.<method>(...)`` call inside a custom Function's ``forward``, a member of its class (a
method torch wants and cannot find, one it refuses to see beside another), the earlier
registration on the same object, the pack hook of the ``saved_tensors_hooks`` block the line
runs in, and the hooks on the autograd graph the line's tensors reach.

Each answers where a torch check that runs *after* the user's code returned (so no user frame
is left on the traceback) was really decided:

=========================  ===========================================================
rule                       the line named
=========================  ===========================================================
``ctx:<method>``           the ``ctx.<method>(...)`` call in the ``forward`` (or
                           ``setup_context``) of the Function class the line applies
``member:<name>``          the class's ``<name>`` when it has one (``vjp = backward``),
                           else a near miss (``foward``), else its ``class`` line
``returns:<method>``       the last ``return`` of ``<method>`` of that class, else of the
                           one user Function in the graph behind the line's tensors
``registered``             the previous ``register_*`` call on the same object in the
                           same function
``pack``                   in the pack hook of the enclosing ``saved_tensors_hooks``
                           block: its in-place call on its argument, else its return
=========================  ===========================================================
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterator
from types import FrameType
from typing import Any

import torch

from gradprobe._patch import WRAPPED_ATTR, node_hook_tables
from gradprobe._recorder import SourceLine
from gradprobe._source import is_user_file
from gradprobe.checks._blame import function_at, last_return, named_values, parsed, return_of
from gradprobe.hooks._names import frame_variables

__all__ = ["graph_hook_line", "member_line", "member_rule"]

_GRAPH_NODES = 4096  # nodes walked from the raising line's tensors to find their hooks


def member_rule(rule: str, frame: FrameType, line: int) -> SourceLine | None:
    """The line ``rule`` (one of the module's table) names from ``line`` of ``frame``."""
    kind, _, name = rule.partition(":")
    if kind == "ctx":
        return _first(_ctx_call(cls, name) for cls in _functions(frame, line))
    if kind == "member":
        return _first(member_line(cls, name) for cls in _functions(frame, line))
    if kind == "returns":
        return _returns(frame, line, name)
    if rule == "registered":
        return _registered(frame, line)
    if rule == "pack":
        return _pack_hook(frame, line)
    return None


def _first(lines: Iterator[SourceLine | None]) -> SourceLine | None:
    return next((found for found in lines if found is not None), None)


# -- a custom Function named on the line ------------------------------------------------------


def _functions(frame: FrameType, line: int) -> Iterator[type]:
    """The user's ``autograd.Function`` classes named on ``line`` (``Scale.apply(x)``)."""
    for value in named_values(frame, line):
        if not isinstance(value, type) or not issubclass(value, torch.autograd.Function):
            continue
        if _class_node(value) is not None:
            yield value


def _class_node(cls: type) -> tuple[str, ast.ClassDef] | None:
    """The file and ``class`` statement of ``cls``, found through one of its methods' code."""
    for member in vars(cls).values():
        code = getattr(getattr(member, "__func__", member), "__code__", None)
        if code is None or not is_user_file(code.co_filename):
            continue
        tree = parsed(code.co_filename)
        for node in ast.walk(tree) if tree is not None else ():
            if (
                isinstance(node, ast.ClassDef)
                and node.name == cls.__name__
                and node.lineno <= code.co_firstlineno <= (node.end_lineno or node.lineno)
            ):
                return code.co_filename, node
    return None


def _ctx_call(cls: type, method: str) -> SourceLine | None:
    """The first ``<ctx>.<method>(...)`` call in the class's ``forward`` or ``setup_context``
    (``ctx`` being whatever the first argument is called)."""
    found = _class_node(cls)
    if found is None:
        return None
    filename, klass = found
    for function in klass.body:
        if not isinstance(function, ast.FunctionDef) or function.name not in (
            "forward",
            "setup_context",
        ):
            continue
        if not function.args.args:
            continue
        ctx = function.args.args[0].arg
        for node in ast.walk(function):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == method
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == ctx
            ):
                return (filename, node.lineno, function.name)
    return None


def member_line(cls: type, name: str) -> SourceLine | None:
    """Where the class defines ``name``; when it does not, a near miss of it, else the
    ``class`` line."""
    found = _class_node(cls)
    if found is None:
        return None
    filename, klass = found
    members: dict[str, int] = {}
    for statement in klass.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            members.setdefault(statement.name, statement.lineno)
        elif isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    members.setdefault(target.id, statement.lineno)
    if name in members:
        return (filename, members[name], cls.__name__)
    near = difflib.get_close_matches(name, list(members), n=1, cutoff=0.75)
    return (filename, members[near[0]] if near else klass.lineno, cls.__name__)


def _returns(frame: FrameType, line: int, method: str) -> SourceLine | None:
    """The last ``return`` of ``method`` of the Function class named on the line, else of
    the one user Function in the graph behind the line's tensors (the engine checks what a
    backward returned after it returned: no frame of it is left)."""
    classes = list(_functions(frame, line))
    if not classes:
        found: dict[type, None] = {}
        for value in named_values(frame, line):
            if isinstance(value, torch.Tensor):
                found.update(dict.fromkeys(_graph_functions(value.grad_fn)))
        classes = list(found) if len(found) == 1 else []
    return _first(return_of(getattr(cls, method, None)) for cls in classes)


def _graph_functions(root: Any) -> Iterator[type]:
    """The user's Function classes of the nodes reachable from ``root``."""
    for node in _walk(root):
        cls = getattr(node, "_forward_cls", None)
        if isinstance(cls, type) and _class_node(cls) is not None:
            yield cls


def _walk(root: Any) -> Iterator[Any]:
    """The autograd nodes reachable from ``root`` (at most ``_GRAPH_NODES``)."""
    seen: set[int] = set()
    stack = [root]
    while stack and len(seen) < _GRAPH_NODES:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        stack.extend(next_node for next_node, _ in getattr(node, "next_functions", ()))


# -- the earlier registration on the same object ----------------------------------------------


def _registered(frame: FrameType, line: int) -> SourceLine | None:
    """The last ``<obj>.register_*(...)`` call before ``line`` in the same function, on the
    object the raising line registers on."""
    filename = frame.f_code.co_filename
    scope: ast.AST | None = _scope(filename, frame)
    if scope is None:
        return None
    calls = [
        (node.lineno, ast.unparse(node.func.value))
        for node in ast.walk(scope)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr.startswith("register_")
    ]
    receivers = {receiver for lineno, receiver in calls if lineno == line}
    earlier = [lineno for lineno, receiver in calls if lineno < line and receiver in receivers]
    return (filename, max(earlier), frame.f_code.co_name) if earlier else None


def _scope(filename: str, frame: FrameType) -> ast.AST | None:
    if frame.f_code.co_name == "<module>":
        return parsed(filename)
    return function_at(filename, frame.f_code.co_firstlineno)


# -- the pack hook of the enclosing saved_tensors_hooks block ---------------------------------


def _pack_hook(frame: FrameType, line: int) -> SourceLine | None:
    """In the pack hook given to the ``saved_tensors_hooks(pack, unpack)`` block around
    ``line``: the in-place call on its argument, else its last return."""
    filename = frame.f_code.co_filename
    scope = _scope(filename, frame)
    if scope is None:
        return None
    variables = dict(frame_variables(frame))
    for block in ast.walk(scope):
        if not isinstance(block, ast.With) or not (
            block.lineno <= line <= (block.end_lineno or block.lineno)
        ):
            continue
        for item in block.items:
            call = item.context_expr
            if isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Name):
                found = _inplace_or_return(variables.get(call.args[0].id))
                if found is not None:
                    return found
    return None


def _inplace_or_return(function: object) -> SourceLine | None:
    code = getattr(function, "__code__", None)
    if code is None or not is_user_file(code.co_filename):
        return None
    node = function_at(code.co_filename, code.co_firstlineno)
    if node is None or not node.args.args:
        return None
    argument = node.args.args[0].arg
    for call in ast.walk(node):
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr.endswith("_")
            and not call.func.attr.startswith("_")
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id == argument
        ):
            return (code.co_filename, call.lineno, code.co_name)
    return return_of(function)


# -- hooks on the graph the line's tensors reach ----------------------------------------------


def graph_hook_line(frame: FrameType, line: int, text: str) -> SourceLine | None:
    """The last ``return`` of the user's hook on an autograd node of the graph behind the
    tensors named on ``line`` (torch's engine checks what a node hook returned after it
    returned, so no frame of it is left): the hook whose name torch's ``text`` quotes, else
    the only one there is."""
    hooks: dict[Any, None] = {}
    for value in named_values(frame, line):
        if isinstance(value, torch.Tensor):
            hooks.update(dict.fromkeys(_node_hooks(value.grad_fn)))
    user = [code for code in hooks if is_user_file(code.co_filename)]
    quoted = [code for code in user if f"'{code.co_name}'" in text]
    chosen = quoted or user
    if len(chosen) != 1:
        return None
    code = chosen[0]
    returned = last_return(code.co_filename, code.co_firstlineno)
    return (code.co_filename, returned, code.co_name) if returned is not None else None


def _node_hooks(root: Any) -> Iterator[Any]:
    """The code objects of the hooks on the nodes reachable from ``root``."""
    for node in _walk(root):
        try:
            tables = node_hook_tables(node)
        except (AttributeError, RuntimeError, TypeError):
            tables = (None, None)
        for table in tables:
            for hook in (table or {}).values():
                for _ in range(4):  # gradprobe's own wrappers keep the user's hook
                    hook = getattr(hook, WRAPPED_ATTR, hook)
                code = getattr(hook, "__code__", None)
                if code is not None:
                    yield code
