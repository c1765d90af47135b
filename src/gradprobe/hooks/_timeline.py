"""The order in which hooks fire during a forward and backward pass: :func:`timeline`.

Every hook that can fire is swapped, for the duration of the call only, for a thin wrapper
that notes the event and calls the hook with the same arguments, returning what it
returns. Hooks are found in three ways:

- before the call, the live modules and tensors that carry hooks (``gc.get_objects()``,
  so models held anywhere count) and the global module hook tables;
- during the call, hooks registered through ``nn.Module.register_*_hook``, the global
  ``register_module_*_hook`` functions, ``Tensor.register_hook`` and
  ``Tensor.register_post_accumulate_grad_hook`` (those functions are patched);
- when a backward pass starts (``torch.autograd.backward`` / ``grad`` are patched), the
  hooks on the autograd nodes of the graph about to run (NOTE [node hook tables] in
  ``_patch``), walking at most ``max_nodes`` nodes.

Everything is put back in a ``finally``: hook tables hold the user's callables again and
the patched functions are the originals, also when the call raises. A wrapper that
outlives the call (a graph kept for a later backward) just calls the hook. The wrappers
never touch tensor values (no host syncs).
"""

from __future__ import annotations

import functools
import gc
import itertools
import warnings
import weakref
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING, Any, Literal

import torch
import torch.nn.modules.module as torch_module

from gradprobe import _deepfree
from gradprobe._nosync import hook_body
from gradprobe._patch import HookSwaps, Patches, node_hook_tables
from gradprobe._source import user_frame
from gradprobe.errors import GradprobeTypeError, GradprobeValueError, describe
from gradprobe.findings import source_line
from gradprobe.hooks._inventory import GLOBAL_OWNER, HookKind
from gradprobe.hooks._names import (
    WRAPPED_ATTR,
    WrappedHook,
    callable_name,
    callable_source,
    describe_tensor,
    display_path,
    find_module_name,
    frame_variables,
    in_internal,
    is_torch_callable,
    module_label,
)

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

__all__ = ["HookEvent", "HookTimeline", "timeline"]

Phase = Literal["forward", "backward"]

_MODULE_REGISTRATIONS: tuple[tuple[str, HookKind], ...] = (
    ("register_forward_pre_hook", "forward_pre"),
    ("register_forward_hook", "forward"),
    ("register_full_backward_pre_hook", "backward_pre"),
    ("register_full_backward_hook", "backward"),
    ("register_backward_hook", "backward_legacy"),
)
_GLOBAL_REGISTRATIONS: tuple[tuple[str, HookKind], ...] = (
    ("register_module_forward_pre_hook", "global_forward_pre"),
    ("register_module_forward_hook", "global_forward"),
    ("register_module_full_backward_pre_hook", "global_backward_pre"),
    ("register_module_full_backward_hook", "global_backward"),
    ("register_module_backward_hook", "global_backward_legacy"),
)


@dataclass(frozen=True)
class HookEvent:
    """One hook call: when (``index``, ``phase``), what kind, on what, which callable.

    ``node`` is the autograd node the engine was running when a backward hook fired.
    """

    index: int
    phase: Phase
    kind: HookKind
    target: str
    hook: str
    file: str | None = None
    line: int | None = None
    node: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"index", "phase", "kind", "target", "hook", "file", "line", "node"}``."""
        return {
            "index": self.index,
            "phase": self.phase,
            "kind": self.kind,
            "target": self.target,
            "hook": self.hook,
            "file": self.file,
            "line": self.line,
            "node": self.node,
        }

    def __str__(self) -> str:
        where = (
            f" ({source_line(display_path(self.file), self.line)})"
            if self.file and self.line
            else ""
        )
        return f"{self.index:3d} {self.phase:8s} {self.kind:16s} {self.target}: {self.hook}{where}"


@dataclass(frozen=True)
class HookTimeline:
    """What :func:`timeline` saw, in firing order; prints as a table."""

    events: tuple[HookEvent, ...]
    notes: tuple[str, ...] = ()

    def __iter__(self) -> Iterator[HookEvent]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.events)

    def order(self) -> list[tuple[str, str]]:
        """``[(kind, target), ...]`` in firing order: handy in assertions."""
        return [(event.kind, event.target) for event in self.events]

    def to_dict(self) -> dict[str, Any]:
        """``{"events": [...], "notes": [...]}``."""
        return {"events": [event.to_dict() for event in self.events], "notes": list(self.notes)}

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from gradprobe.render.hooks import timeline_view

        yield timeline_view(self)

    def __str__(self) -> str:
        from gradprobe.render.text import to_text

        return to_text(self)

    def _repr_html_(self) -> str:
        """The timeline as HTML, for notebooks."""
        from gradprobe.render.hooks import timeline_view
        from gradprobe.render.html_report import to_html

        return to_html(timeline_view(self))

    def __repr__(self) -> str:
        return f"<HookTimeline {len(self.events)} hook calls>"


class _Names:
    """Display names for modules and tensors, from the model given and from gc."""

    def __init__(self, model: torch.nn.Module | None) -> None:
        self.paths: dict[int, str | None] = {}
        self.modules: dict[int, str] = {}
        self.tensors: dict[int, str] = {}
        self.parents: dict[int, tuple[torch.nn.Module, str]] = {}
        self.root_cache: dict[int, dict[int, str]] = {}
        self.variables: dict[int, str] = {}  # id(module) -> the caller's variable
        self.tensor_vars: dict[int, str] = {}  # id(tensor) -> the caller's variable
        if model is not None:
            for path, module in model.named_modules():
                self.paths.setdefault(id(module), path or None)
            for path, tensor in model.named_parameters():
                self.tensors.setdefault(id(tensor), path)

    def learn_variables(self, frame: FrameType | None) -> None:
        """Name models and tensors by the variables of the code that called timeline()."""
        if frame is None:
            return
        for var, value in reversed(frame_variables(frame)):  # locals win over globals
            if var.startswith("_"):
                continue
            kind = type(value)
            if issubclass(kind, torch.nn.Module):
                self.variables[id(value)] = var
            elif issubclass(kind, torch.Tensor):
                self.tensor_vars[id(value)] = var

    def learn(self, modules: list[torch.nn.Module]) -> None:
        for module in modules:
            children = getattr(module, "_modules", None) or {}
            for name, child in children.items():
                if child is not None:
                    self.parents.setdefault(id(child), (module, name))

    def path(self, module: torch.nn.Module) -> str | None:
        if id(module) in self.paths:
            return self.paths[id(module)]
        parts: list[str] = []
        current = module
        for _ in range(64):
            parent = self.parents.get(id(current))
            if parent is None:
                break
            current, name = parent
            parts.append(name)
        held_as = self.variables.get(id(current))
        if held_as is not None:
            parts.append(held_as)
        path = ".".join(reversed(parts)) or None
        self.paths[id(module)] = path
        return path

    def module(self, module: torch.nn.Module) -> str:
        label = self.modules.get(id(module))
        if label is None:
            label = self.modules[id(module)] = module_label(module, self.path(module))
        return label

    def owner_of(self, tensor: torch.Tensor, modules: list[torch.nn.Module]) -> str | None:
        for module in modules:
            params = getattr(module, "_parameters", None) or {}
            for name, param in params.items():
                if param is tensor:
                    prefix = self.path(module)
                    return f"{prefix}.{name}" if prefix else name
        return None

    def tensor(self, tensor: torch.Tensor, var: str | None = None) -> str:
        # Only names that stay true are cached: ids of dead intermediates are reused.
        known = self.tensors.get(id(tensor))
        if known is not None:
            return known
        return describe_tensor(tensor, var or self.tensor_vars.get(id(tensor)))


def _has_module_hooks(module: torch.nn.Module) -> bool:
    return any(
        getattr(module, table, None)
        for table in (
            "_forward_pre_hooks",
            "_forward_hooks",
            "_backward_hooks",
            "_backward_pre_hooks",
        )
    )


def _has_tensor_hooks(tensor: torch.Tensor) -> bool:
    try:
        return bool(tensor._backward_hooks or getattr(tensor, "_post_accumulate_grad_hooks", None))
    except Exception:  # noqa: BLE001 - exotic tensor subclasses (fake, functional) refuse
        return False


def _variable_name(value: object, depth: int) -> str | None:
    frame = user_frame(depth + 1)
    if frame is None:
        return None
    for var, candidate in frame_variables(frame):
        if candidate is value and not var.startswith("_"):
            return var
    return None


class _Recorder:
    """Swaps hooks for recording wrappers; see the module docstring."""

    def __init__(self, names: _Names, max_nodes: int) -> None:
        self.names = names
        self.max_nodes = max_nodes
        self.events: list[HookEvent] = []
        self.notes: list[str] = []
        self.active = True
        self.swaps = HookSwaps()
        self.patches = Patches()
        self.counter = itertools.count()
        self.sources: dict[int, tuple[str, tuple[str, int] | None]] = {}
        # non-leaf tensors that retain their grad: id -> (weak ref, label). retain_grad()
        # installs a C++ hook that cannot be wrapped; a marker hook added as the last
        # tensor hook when a backward pass starts fires just before it (retain-grad hooks
        # always run after the other tensor hooks).
        self.retaining: dict[int, tuple[weakref.ref[torch.Tensor], str]] = {}
        self.register_hook: Callable[..., Any] = torch.Tensor.register_hook

    # -- wrapping -------------------------------------------------------------------------

    @hook_body
    def note(
        self,
        kind: HookKind,
        target: str | Callable[[tuple[Any, ...]], str],
        hook: object,
        args: tuple[Any, ...],
    ) -> None:
        """The recording part of every wrapper (never touches tensor values)."""
        self.record(kind, target if isinstance(target, str) else target(args), hook)

    def record(self, kind: HookKind, target: str, hook: object) -> None:
        info = self.sources.get(id(hook))
        if info is None:
            info = self.sources[id(hook)] = (callable_name(hook), callable_source(hook))
        name, source = info
        node = torch._C._current_autograd_node()
        self.events.append(
            HookEvent(
                index=next(self.counter),
                phase="backward" if node is not None else "forward",
                kind=kind,
                target=target,
                hook=name,
                file=source[0] if source else None,
                line=source[1] if source else None,
                node=node.name().removeprefix("torch::autograd::") if node is not None else None,
            )
        )

    def wrapper(
        self, hook: Any, kind: HookKind, target: str | Callable[[tuple[Any, ...]], str]
    ) -> Callable[..., Any]:
        recorder = self

        def recording(*args: Any, **kwargs: Any) -> Any:
            if recorder.active:
                recorder.note(kind, target, hook, args)
            return hook(*args, **kwargs)

        with_name: Any = recording
        with_name.__name__ = getattr(hook, "__name__", "hook")
        with_name.__qualname__ = getattr(hook, "__qualname__", with_name.__name__)
        setattr(recording, WRAPPED_ATTR, hook)
        return recording

    def wrap_table(
        self,
        table: MutableMapping[Any, Any] | None,
        kind: HookKind,
        target: str | Callable[[tuple[Any, ...]], str],
        *,
        skip_torch: bool = False,
    ) -> None:
        if not table:
            return
        for key, hook in list(table.items()):
            if getattr(hook, WRAPPED_ATTR, None) is not None:
                continue
            if skip_torch and is_torch_callable(hook):
                continue
            self.swaps.swap(table, key, self.wrapper(hook, kind, target))

    def module_target(self, args: tuple[Any, ...]) -> str:
        module = args[0] if args else None
        if isinstance(module, torch.nn.Module):
            return self.names.module(module)
        return GLOBAL_OWNER

    def wrap_module(self, module: torch.nn.Module) -> None:
        label = self.names.module(module)
        self.wrap_table(module._forward_pre_hooks, "forward_pre", label)
        self.wrap_table(module._forward_hooks, "forward", label)
        self.wrap_table(module._backward_pre_hooks, "backward_pre", label)
        legacy = module._is_full_backward_hook is False
        self.wrap_table(module._backward_hooks, "backward_legacy" if legacy else "backward", label)

    def wrap_globals(self) -> None:
        target = self.module_target
        self.wrap_table(torch_module._global_forward_pre_hooks, "global_forward_pre", target)
        self.wrap_table(torch_module._global_forward_hooks, "global_forward", target)
        self.wrap_table(torch_module._global_backward_pre_hooks, "global_backward_pre", target)
        legacy = torch_module._global_is_full_backward_hook is False
        kind: HookKind = "global_backward_legacy" if legacy else "global_backward"
        self.wrap_table(torch_module._global_backward_hooks, kind, target)

    def retain(self, tensor: torch.Tensor, label: str) -> None:
        if not tensor.is_leaf and tensor.retains_grad:
            self.retaining.setdefault(id(tensor), (weakref.ref(tensor), label))

    def mark_retains(self) -> list[Any]:
        """Marker hooks on the tensors that retain grad; returns their handles."""
        handles = []
        for ref, label in list(self.retaining.values()):
            tensor = ref()
            if tensor is None or not tensor.retains_grad:
                continue

            def marker(_grad: torch.Tensor, label: str = label) -> None:
                if self.active:
                    self.record_retain(label)

            setattr(marker, WRAPPED_ATTR, marker)  # never wrapped as a user hook
            handles.append(self.register_hook(tensor, marker))
        return handles

    @hook_body
    def record_retain(self, label: str) -> None:
        node = torch._C._current_autograd_node()
        self.events.append(
            HookEvent(
                index=next(self.counter),
                phase="backward",
                kind="retains_grad",
                target=label,
                hook="retain_grad",
                node=node.name().removeprefix("torch::autograd::") if node is not None else None,
            )
        )

    def wrap_tensor(self, tensor: torch.Tensor, label: str) -> None:
        self.wrap_table(tensor._backward_hooks, "tensor", label, skip_torch=True)
        post = getattr(tensor, "_post_accumulate_grad_hooks", None)
        self.wrap_table(post, "post_accumulate", label)

    # -- discovery ------------------------------------------------------------------------

    def scan(self) -> None:
        modules: list[torch.nn.Module] = []
        tensors: list[torch.Tensor] = []
        for obj in gc.get_objects():
            kind = type(obj)
            if issubclass(kind, torch.nn.Module):
                modules.append(obj)
            elif issubclass(kind, torch.Tensor):
                tensors.append(obj)
        self.names.learn(modules)
        for module in modules:
            if _has_module_hooks(module):
                self.wrap_module(module)
        for tensor in tensors:
            if _has_tensor_hooks(tensor):
                label = self.names.tensors.get(id(tensor)) or self.names.owner_of(tensor, modules)
                if label is not None:
                    self.names.tensors[id(tensor)] = label  # a parameter: lives on
                self.wrap_tensor(tensor, label or self.names.tensor(tensor))
            if tensor.retains_grad:
                self.retain(tensor, self.names.tensors.get(id(tensor)) or self.names.tensor(tensor))
        self.wrap_globals()

    def walk_graph(self, roots: list[torch.Tensor]) -> None:
        """Wrap the hooks on the nodes of the graph a backward pass is about to run."""
        fns: list[Any] = []
        index: dict[Any, int] = {}
        children: list[list[int]] = []
        for root in roots:
            fn = root.grad_fn
            if fn is not None and fn not in index:
                index[fn] = len(fns)
                fns.append(fn)
                children.append([])
        position = 0
        limited = False
        while position < len(fns):
            fn = fns[position]
            for child, _ in fn.next_functions:
                if child is None:
                    continue
                slot = index.get(child)
                if slot is None:
                    if len(fns) >= self.max_nodes:
                        limited = True
                        continue
                    slot = index[child] = len(fns)
                    fns.append(child)
                    children.append([])
                children[position].append(slot)
            position += 1
        if len(fns) > _deepfree.BAND:
            hold = _deepfree.hold_points(children)
            if hold:
                _deepfree.protect((fns[i] for i in hold), roots=roots)
        for fn in fns:
            self.wrap_node(fn)
        if limited:
            note = (
                f"node hooks were looked for on the first {self.max_nodes} autograd nodes only "
                f"(max_nodes={self.max_nodes})"
            )
            if note not in self.notes:
                self.notes.append(note)

    def wrap_node(self, fn: Any) -> None:
        post, pre = node_hook_tables(fn)
        name = fn.name()
        if post:
            for key, hook in list(post.items()):
                inner = getattr(hook, "hook", None)
                if isinstance(hook, WrappedHook):
                    if getattr(inner, WRAPPED_ATTR, None) is None:
                        ref = getattr(hook, "module", None)
                        module = ref() if callable(ref) else None
                        label = self.names.module(module) if module is not None else name
                        self.swaps.swap(post, key, self.wrapper(hook, "backward_legacy", label))
                    continue
                if getattr(hook, WRAPPED_ATTR, None) is None and not is_torch_callable(hook):
                    self.swaps.swap(post, key, self.wrapper(hook, "node_post", name))
        self.wrap_table(pre, "node_pre", name, skip_torch=True)
        variable = getattr(fn, "variable", None)
        if isinstance(variable, torch.Tensor):
            self.wrap_tensor(variable, self.names.tensor(variable))

    # -- patches --------------------------------------------------------------------------

    def install(self) -> None:
        recorder = self
        module_cls = torch.nn.Module
        for method, kind in _MODULE_REGISTRATIONS:
            original = getattr(module_cls, method)
            self.patches.set(module_cls, method, _registering_method(recorder, original, kind))
        for function, kind in _GLOBAL_REGISTRATIONS:
            original = getattr(torch_module, function)
            self.patches.set(torch_module, function, _registering_global(recorder, original, kind))
        for method, kind in (
            ("register_hook", "tensor"),
            ("register_post_accumulate_grad_hook", "post_accumulate"),
        ):
            original = getattr(torch.Tensor, method)
            self.patches.set(torch.Tensor, method, _registering_tensor(recorder, original, kind))
        original_retain = torch.Tensor.retain_grad
        self.patches.set(torch.Tensor, "retain_grad", _retaining(recorder, original_retain))
        for function in ("backward", "grad"):
            original = getattr(torch.autograd, function)
            self.patches.set(torch.autograd, function, _walking(recorder, original, function))

    def close(self) -> None:
        self.active = False
        self.patches.undo()
        self.swaps.restore()


def _registering_method(
    recorder: _Recorder, original: Callable[..., Any], kind: HookKind
) -> Callable[..., Any]:
    @functools.wraps(original)
    def register(self: torch.nn.Module, hook: Any, *args: Any, **kwargs: Any) -> Any:
        handle = original(self, hook, *args, **kwargs)
        if recorder.active and not in_internal():
            frame = user_frame(2)
            if id(self) not in recorder.names.paths and frame is not None:
                name = find_module_name(self, frame, recorder.names.root_cache)
                if name is not None:
                    recorder.names.paths[id(self)] = name
            recorder.wrap_module(self)
        return handle

    return register


def _registering_global(
    recorder: _Recorder, original: Callable[..., Any], kind: HookKind
) -> Callable[..., Any]:
    @functools.wraps(original)
    def register(hook: Any, *args: Any, **kwargs: Any) -> Any:
        handle = original(hook, *args, **kwargs)
        if recorder.active and not in_internal():
            recorder.wrap_globals()
        return handle

    return register


def _registering_tensor(
    recorder: _Recorder, original: Callable[..., Any], kind: HookKind
) -> Callable[..., Any]:
    @functools.wraps(original)
    def register(self: torch.Tensor, hook: Any) -> Any:
        handle = original(self, hook)
        if recorder.active and not in_internal():
            label = recorder.names.tensors.get(id(self))
            if label is None:
                label = recorder.names.tensor(self, _variable_name(self, 2))
            table = self._backward_hooks if kind == "tensor" else self._post_accumulate_grad_hooks
            recorder.wrap_table(table, kind, label, skip_torch=kind == "tensor")
        return handle

    return register


def _retaining(recorder: _Recorder, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def retain_grad(self: torch.Tensor) -> Any:
        result = original(self)
        if recorder.active and not in_internal():
            label = recorder.names.tensors.get(id(self))
            recorder.retain(self, label or recorder.names.tensor(self, _variable_name(self, 2)))
        return result

    return retain_grad


def _walking(recorder: _Recorder, original: Callable[..., Any], name: str) -> Callable[..., Any]:
    @functools.wraps(original)
    def run(*args: Any, **kwargs: Any) -> Any:
        markers: list[Any] = []
        if recorder.active and not in_internal():
            first = args[0] if args else kwargs.get("tensors", kwargs.get("outputs"))
            roots = (
                [first]
                if isinstance(first, torch.Tensor)
                else [t for t in (first or ()) if isinstance(t, torch.Tensor)]
            )
            recorder.walk_graph(roots)
            markers = recorder.mark_retains()
        try:
            return original(*args, **kwargs)
        finally:
            for handle in markers:
                handle.remove()

    return run


def timeline(
    fn: Callable[[], object],
    *,
    model: torch.nn.Module | None = None,
    names: Mapping[str, torch.Tensor] | None = None,
    max_nodes: int = 50_000,
) -> HookTimeline:
    """Run ``fn`` (a forward and backward pass) and return every hook call, in order.

    Args:
        fn: called once with no arguments; its return value is discarded.
        model: optional; its submodules and parameters are named by their paths (``fc1
            (Linear)``, ``fc1.weight``). Without it, names come from the modules that
            contain each other and from the variables hooks were registered on.
        names: optional ``{name: tensor}`` for tensors with hooks (inputs, outputs).
        max_nodes: at most this many autograd nodes are searched for node hooks when a
            backward pass starts.

    Returns:
        A :class:`HookTimeline`. Hook tables and patched functions are restored when
        ``fn`` returns or raises; an exception from ``fn`` propagates unchanged.

    Example:
        >>> import torch
        >>> from gradprobe.hooks import timeline
        >>> layer = torch.nn.Linear(2, 1)
        >>> def step():
        ...     x = torch.ones(1, 2, requires_grad=True)
        ...     y = layer(x)
        ...     y.register_hook(lambda grad: None)
        ...     y.sum().backward()
        >>> h1 = layer.register_forward_hook(lambda m, args, out: None)
        >>> h2 = layer.register_full_backward_hook(lambda m, gin, gout: None)
        >>> [event.kind for event in timeline(step, model=layer)]
        ['forward', 'tensor', 'backward']
        >>> h1.remove(); h2.remove()
    """
    given: object = fn
    if not callable(given):
        msg = (
            f"timeline() runs a function that does a forward and backward pass, got "
            f"{describe(given)}. Pass a function: timeline(lambda: model(x).sum().backward())."
        )
        raise GradprobeTypeError(msg)
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 1:
        msg = f"timeline(max_nodes=...) must be a positive int, got {describe(max_nodes)}."
        raise GradprobeValueError(msg)
    given_names: object = names
    if given_names is not None and (
        not isinstance(given_names, Mapping)
        or not all(isinstance(t, torch.Tensor) for t in given_names.values())
    ):
        msg = (
            f"timeline(names=...) takes a mapping from names to tensors, got "
            f"{describe(given_names)}; e.g. names={{'x': x, 'logits': logits}}."
        )
        raise GradprobeTypeError(msg)
    given_model: object = model
    if given_model is not None and not isinstance(given_model, torch.nn.Module):
        msg = (
            f"timeline(model=...) names modules and parameters of an nn.Module, got "
            f"{describe(given_model)}."
        )
        raise GradprobeTypeError(msg)
    table = _Names(model)
    if model is None:
        table.learn_variables(user_frame(2))
    for label, tensor in (names or {}).items():
        table.tensors[id(tensor)] = str(label)
    recorder = _Recorder(table, max_nodes)
    try:
        with warnings.catch_warnings():
            # isinstance checks over gc's objects touch deprecated torch aliases
            warnings.simplefilter("ignore", FutureWarning)
            recorder.scan()
        recorder.install()
        fn()
    finally:
        recorder.close()
    return HookTimeline(events=tuple(recorder.events), notes=tuple(recorder.notes))
