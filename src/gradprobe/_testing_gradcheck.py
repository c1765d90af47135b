"""Which custom backward makes ``gradcheck`` fail: the search behind ``assert_gradcheck``.

After ``torch.autograd.gradcheck(fn, inputs)`` failed, :func:`find_culprits` runs ``fn`` once
more while watching two things: every custom ``autograd.Function`` applied (its class and a
copy of its inputs) and every ``Tensor.register_hook`` call. Then:

- each Function class is gradchecked alone, on the inputs it got: one that fails is a
  culprit whatever else happens around it;
- each backward hook (registered while ``fn`` runs, already on an input tensor, or a module
  backward hook when ``fn`` is a module) is left out in turn: if gradcheck of ``fn`` then
  passes, that hook is a culprit.

The patches (``Function.apply`` and ``Tensor.register_hook``, both class attributes) are
process-wide while they are installed and are always undone in ``finally``; hooks are left
out by taking them from their dict and putting the same dict contents back.
"""

from __future__ import annotations

import contextlib
import inspect
import linecache
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass
from types import CodeType
from typing import Any

import torch
from torch.autograd.function import Function
from torch.autograd.gradcheck import GradcheckError

from gradprobe._source import shown_file, user_location
from gradprobe.errors import error_text
from gradprobe.findings import Location

__all__ = ["Culprit", "find_culprits", "function_of"]

_MAX_DECORATOR_LINES = 8
_CALLS_PER_CLASS = 2  # a Function applied in a loop is checked on its first calls only


@dataclass(frozen=True)
class Culprit:
    """A custom Function or hook whose gradient disagrees with finite differences."""

    kind: str  # "function", "tensor_hook", "input_hook", "module_hook"
    what: str
    why: str
    mismatch: str
    node: str | None
    locations: tuple[Location, ...]


@dataclass
class _Apply:
    cls: type[Function]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    where: Location | None


@dataclass
class _Hook:
    key: object
    name: str
    where: Location | None
    defined: Location | None


def find_culprits(
    fn: Callable[..., Any], inputs: tuple[Any, ...], options: dict[str, Any]
) -> list[Culprit]:
    """The custom Functions and hooks that make ``gradcheck(fn, inputs)`` fail."""
    applies, hooks = _observe(fn, inputs)
    cls = function_of(fn)
    if cls is not None:  # fn is `MyFunction.apply` itself, bound before any patch
        applies.insert(0, _Apply(cls, tuple(_copy(arg) for arg in inputs), {}, None))
    culprits: list[Culprit] = []
    checked: dict[type[Function], int] = {}
    for call in applies:
        if checked.get(call.cls, 0) >= _CALLS_PER_CLASS or any(
            c.node == _node_name(call.cls) for c in culprits
        ):
            continue
        checked[call.cls] = checked.get(call.cls, 0) + 1
        mismatch = _check_alone(call, options)
        if mismatch is not None:
            culprits.append(_function_culprit(call, mismatch))
    for hook in hooks:
        with _without_tensor_hook(hook.key):
            if _passes(fn, inputs, options):
                culprits.append(_hook_culprit("tensor_hook", f"tensor hook {hook.name}", hook))
    for kind, label, table, key, hook in _existing_hooks(fn, inputs):
        with _without(table, key):
            if _passes(fn, inputs, options):
                culprits.append(_hook_culprit(kind, f"{label} {hook.name}", hook))
    return culprits


def function_of(fn: object) -> type[Function] | None:
    """The custom Function class when ``fn`` is its ``apply`` (``Cube.apply``), else None."""
    owner = getattr(fn, "__self__", None)
    if (
        (inspect.ismethod(fn) or inspect.isbuiltin(fn))  # torch 2.14: a C classmethod
        and isinstance(owner, type)
        and issubclass(owner, Function)
        and fn.__name__ == "apply"
    ):
        return owner
    return None


# -- observing one run -----------------------------------------------------------------------


def _observe(fn: Callable[..., Any], inputs: tuple[Any, ...]) -> tuple[list[_Apply], list[_Hook]]:
    applies: list[_Apply] = []
    hooks: dict[object, _Hook] = {}
    original_apply = Function.__dict__["apply"]
    original_register = torch.Tensor.register_hook

    def apply(cls: type[Function], *args: Any, **kwargs: Any) -> Any:
        if sum(1 for a in applies if a.cls is cls) < _CALLS_PER_CLASS:
            copies = tuple(_copy(arg) for arg in args)
            applies.append(_Apply(cls, copies, dict(kwargs), user_location("created")))
        return original_apply.__get__(None, cls)(*args, **kwargs)

    def register_hook(self: torch.Tensor, hook: Callable[..., Any]) -> Any:
        key = _key(hook)
        if key not in hooks:
            hooks[key] = _Hook(key, _name(hook), user_location("registered"), _defined(hook))
        return original_register(self, hook)  # type: ignore[no-untyped-call]

    Function.apply = classmethod(apply)  # type: ignore[method-assign,assignment]
    torch.Tensor.register_hook = register_hook  # type: ignore[method-assign]
    try:
        with torch.enable_grad():
            fn(*inputs)
    finally:
        Function.apply = original_apply  # type: ignore[method-assign]
        torch.Tensor.register_hook = original_register  # type: ignore[method-assign]
    return applies, list(hooks.values())


def _copy(arg: Any) -> Any:
    """A detached copy of a tensor argument that remembers whether it required grad."""
    if isinstance(arg, torch.Tensor):
        copy = arg.detach().clone()
        return _Differentiable(copy) if arg.requires_grad and copy.is_floating_point() else copy
    return arg


@dataclass
class _Differentiable:
    tensor: torch.Tensor


# -- checking ----------------------------------------------------------------------------------


def _check_alone(call: _Apply, options: dict[str, Any]) -> str | None:
    """gradcheck of the Function by itself: the first line of its error, or None if it passes."""
    leaves = tuple(
        arg.tensor.clone().requires_grad_(True)
        for arg in call.args
        if isinstance(arg, _Differentiable)
    )
    if not leaves:
        return None

    def alone(*tensors: torch.Tensor) -> Any:
        given = iter(tensors)
        args = [next(given) if isinstance(arg, _Differentiable) else arg for arg in call.args]
        out = call.cls.apply(*args, **call.kwargs)  # type: ignore[no-untyped-call]
        if isinstance(out, torch.Tensor):
            return out
        return tuple(o for o in out if isinstance(o, torch.Tensor) and o.requires_grad)

    try:
        torch.autograd.gradcheck(alone, leaves, raise_exception=True, **options)
    except GradcheckError as error:
        return error_text(error).strip().splitlines()[0].rstrip(",")
    except RuntimeError as error:  # e.g. a backward returning the wrong number of grads
        return f"{type(error).__name__}: {error_text(error).splitlines()[0]}"
    return None


def _passes(fn: Callable[..., Any], inputs: tuple[Any, ...], options: dict[str, Any]) -> bool:
    try:
        return bool(torch.autograd.gradcheck(fn, inputs, raise_exception=False, **options))
    except RuntimeError:
        return False


@contextlib.contextmanager
def _without_tensor_hook(key: object) -> Iterator[None]:
    original = torch.Tensor.register_hook

    def register_hook(self: torch.Tensor, hook: Callable[..., Any]) -> Any:
        if _key(hook) == key:
            return _NoHandle()
        return original(self, hook)  # type: ignore[no-untyped-call]

    torch.Tensor.register_hook = register_hook  # type: ignore[method-assign]
    try:
        yield
    finally:
        torch.Tensor.register_hook = original  # type: ignore[method-assign]


class _NoHandle:
    """Stands in for the handle of a hook that was left out."""

    def remove(self) -> None:
        return None


@contextlib.contextmanager
def _without(table: MutableMapping[Any, Any], key: Any) -> Iterator[None]:
    """Take one hook out of a hook dict and restore the dict (same object, same order)."""
    saved = list(table.items())
    table.pop(key, None)
    try:
        yield
    finally:
        table.clear()
        table.update(saved)


def _existing_hooks(
    fn: Callable[..., Any], inputs: tuple[Any, ...]
) -> list[tuple[str, str, MutableMapping[Any, Any], Any, _Hook]]:
    """Backward hooks already installed: on the input tensors, and on the modules of ``fn``."""
    found: list[tuple[str, str, MutableMapping[Any, Any], Any, _Hook]] = []
    for index, tensor in enumerate(inputs):
        table = (
            getattr(tensor, "_backward_hooks", None) if isinstance(tensor, torch.Tensor) else None
        )
        for key, hook in list((table or {}).items()):
            found.append(
                ("input_hook", f"hook on input {index}", table, key, _existing(hook))  # type: ignore[arg-type]
            )
    owner = fn if isinstance(fn, torch.nn.Module) else getattr(fn, "__self__", None)
    if isinstance(owner, torch.nn.Module):
        for path, module in owner.named_modules():
            name = path or type(owner).__name__
            for attr, label in (
                ("_backward_pre_hooks", "backward pre-hook"),
                ("_backward_hooks", "backward hook"),
            ):
                table = getattr(module, attr, None)
                for key, hook in list((table or {}).items()):
                    found.append(
                        (
                            "module_hook",
                            f"{label} on module {name!r}",
                            table,  # type: ignore[arg-type]
                            key,
                            _existing(hook),
                        )
                    )
    return found


# -- naming ------------------------------------------------------------------------------------


def _target(hook: object) -> object:
    for _ in range(8):
        inner = getattr(hook, "func", None) if not inspect.isfunction(hook) else None
        if inspect.ismethod(hook):
            hook = hook.__func__
        elif inner is not None and callable(inner):  # functools.partial
            hook = inner
        else:
            break
    return hook


def _key(hook: object) -> object:
    """Identity of a hook across calls of ``fn``: its code object (a new lambda per call
    shares it), else its type."""
    code = getattr(_target(hook), "__code__", None)
    return code if isinstance(code, CodeType) else type(hook)


def _name(hook: object) -> str:
    target = _target(hook)
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
    if not isinstance(name, str):
        name = type(hook).__qualname__
    return name.replace("<locals>.", "")


def _defined(hook: object) -> Location | None:
    code = getattr(_target(hook), "__code__", None)
    if not isinstance(code, CodeType):
        return None
    return _code_location(code, _name(hook))


def _code_location(code: CodeType, function: str) -> Location:
    filename = shown_file(code.co_filename)
    line = max(int(code.co_firstlineno), 1)
    # co_firstlineno is the first decorator's line; the `def` line is the one to show.
    for candidate in range(line, line + _MAX_DECORATOR_LINES):
        source = linecache.getline(code.co_filename, candidate).lstrip()
        if source.startswith(("def ", "async def ", "lambda")) or " lambda" in source:
            line = candidate
            break
        if not source.startswith("@"):
            break
    text = linecache.getline(code.co_filename, line).strip() or None
    return Location(file=filename, line=line, role="cause", function=function, text=text)


def _existing(hook: object) -> _Hook:
    return _Hook(_key(hook), _name(hook), None, _defined(hook))


def _node_name(cls: type[Function]) -> str:
    return f"{cls.__name__}Backward"


def _function_culprit(call: _Apply, mismatch: str) -> Culprit:
    locations: list[Location] = []
    backward = inspect.getattr_static(call.cls, "backward", None)
    target = getattr(backward, "__func__", backward)
    code = getattr(target, "__code__", None)
    if isinstance(code, CodeType):
        locations.append(_code_location(code, f"{call.cls.__qualname__}.backward"))
    if call.where is not None:
        locations.append(call.where)
    return Culprit(
        kind="function",
        what=f"custom autograd.Function {call.cls.__qualname__.replace('<locals>.', '')}",
        why=f"its backward alone fails gradcheck ({mismatch})",
        mismatch=mismatch,
        node=_node_name(call.cls),
        locations=tuple(locations),
    )


def _hook_culprit(kind: str, what: str, hook: _Hook) -> Culprit:
    locations = [loc for loc in (hook.defined, hook.where) if loc is not None]
    return Culprit(
        kind=kind,
        what=what,
        why="gradcheck passes once this hook is left out, so it changes the gradient",
        mismatch="",
        node=None,
        locations=tuple(locations),
    )
