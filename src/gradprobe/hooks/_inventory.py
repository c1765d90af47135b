"""Every hook attached to a model or a tensor, as plain data: :func:`inventory`.

Module hooks are read from the module's own tables (``_forward_pre_hooks``,
``_forward_hooks`` with their ``with_kwargs`` / ``always_call`` flags, ``_backward_hooks``
read as legacy or full by ``_is_full_backward_hook``, ``_backward_pre_hooks``), global
module hooks from ``torch.nn.modules.module._global_*``, tensor hooks from
``Tensor._backward_hooks`` and ``_post_accumulate_grad_hooks``, and node hooks from the
tensor's ``grad_fn`` (see NOTE [node hook tables] in ``_patch``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import torch
import torch.nn.modules.module as torch_module

from gradprobe._patch import node_hook_tables
from gradprobe.errors import GradprobeTypeError, describe
from gradprobe.findings import Finding, make_finding
from gradprobe.hooks._names import (
    WrappedHook,
    callable_name,
    callable_source,
    describe_tensor,
    is_torch_callable,
    module_label,
)

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

__all__ = ["GLOBAL_OWNER", "HookEntry", "HookInventory", "HookKind", "inventory"]

HookKind = Literal[
    "forward_pre",
    "forward",
    "backward_pre",
    "backward",
    "backward_legacy",
    "global_forward_pre",
    "global_forward",
    "global_backward_pre",
    "global_backward",
    "global_backward_legacy",
    "tensor",
    "post_accumulate",
    "retains_grad",
    "node_pre",
    "node_post",
]
"""What a hook is: module hooks (``forward_pre`` ... ``backward_legacy``, the latter being
``register_backward_hook``), the same registered for every module (``global_*``), tensor
hooks (``register_hook``, ``register_post_accumulate_grad_hook``, ``retain_grad``) and hooks
on autograd nodes (``grad_fn.register_prehook`` / ``register_hook``)."""

GLOBAL_OWNER = "every module"
"""The owner shown for global module hooks (``register_module_forward_hook`` and kin)."""

_LEGACY_FLAG = "legacy module hook"
_TORCH_FLAG = "installed by torch"


@dataclass(frozen=True)
class HookEntry:
    """One attached hook: what it is attached to, its kind, and the callable."""

    owner: str
    kind: HookKind
    hook: str
    file: str | None = None
    line: int | None = None
    flags: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """``{"owner", "kind", "hook", "file", "line", "flags"}``."""
        return {
            "owner": self.owner,
            "kind": self.kind,
            "hook": self.hook,
            "file": self.file,
            "line": self.line,
            "flags": list(self.flags),
        }


@dataclass(frozen=True)
class HookInventory:
    """The hooks :func:`inventory` found; prints as a table, ``to_dict()`` for JSON."""

    subject: str
    entries: tuple[HookEntry, ...]
    legacy_modules: tuple[tuple[str, bool], ...] = ()
    inplace_hooked: tuple[str, ...] = ()

    def __iter__(self) -> Iterator[HookEntry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def of_kind(self, *kinds: HookKind) -> tuple[HookEntry, ...]:
        """The entries of the given kinds, in inventory order."""
        return tuple(entry for entry in self.entries if entry.kind in kinds)

    def findings(self) -> list[Finding]:
        """Problems visible from the hooks alone: legacy module hooks (GP301, GP302 on a
        module with submodules) and full backward hooks on in-place modules (GP305)."""
        found: list[Finding] = []
        for owner, composite in self.legacy_modules:
            if composite:
                found.append(
                    make_finding(
                        "GP302",
                        message=(
                            f"{owner} has a legacy backward hook (register_backward_hook) but is "
                            "made of several modules: the hook receives the gradients of the "
                            "last autograd node its forward creates, not of its inputs."
                        ),
                        module=owner,
                    )
                )
            else:
                found.append(
                    make_finding(
                        "GP301",
                        message=(
                            f"{owner} has a legacy backward hook (register_backward_hook): its "
                            "grad_input is whatever the module's last autograd node receives "
                            "(for nn.Linear: bias grad, input grad, weight grad transposed)."
                        ),
                        module=owner,
                    )
                )
        found.extend(
            make_finding(
                "GP305",
                message=(
                    f"{owner} modifies its input in place and has a full backward hook (or "
                    "pre-hook): its forward raises 'Output 0 of BackwardHookFunction is a view "
                    "and is being modified inplace'."
                ),
                module=owner,
            )
            for owner in self.inplace_hooked
        )
        return found

    def to_dict(self) -> dict[str, Any]:
        """``{"subject", "hooks": [...], "findings": [...]}``."""
        return {
            "subject": self.subject,
            "hooks": [entry.to_dict() for entry in self.entries],
            "findings": [finding.to_dict() for finding in self.findings()],
        }

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from gradprobe.render.hooks import inventory_view

        yield inventory_view(self)

    def __str__(self) -> str:
        from gradprobe.render.text import to_text

        return to_text(self)

    def _repr_html_(self) -> str:
        """The inventory as HTML, for notebooks."""
        from gradprobe.render.hooks import inventory_view
        from gradprobe.render.html_report import to_html

        return to_html(inventory_view(self))

    def __repr__(self) -> str:
        return f"<HookInventory {self.subject}: {len(self.entries)} hooks>"


def _entry(owner: str, kind: HookKind, fn: object, flags: tuple[str, ...] = ()) -> HookEntry:
    source = callable_source(fn)
    return HookEntry(
        owner=owner,
        kind=kind,
        hook=callable_name(fn),
        file=source[0] if source else None,
        line=source[1] if source else None,
        flags=flags,
    )


def _module_entries(module: torch.nn.Module, owner: str) -> Iterator[HookEntry]:
    kwargs_pre = module._forward_pre_hooks_with_kwargs
    for key, fn in module._forward_pre_hooks.items():
        yield _entry(owner, "forward_pre", fn, ("with_kwargs",) if key in kwargs_pre else ())
    kwargs_fwd = module._forward_hooks_with_kwargs
    always = module._forward_hooks_always_called
    for key, fn in module._forward_hooks.items():
        yield _entry(owner, "forward", fn, _forward_flags(key, kwargs_fwd, always))
    for fn in module._backward_pre_hooks.values():
        yield _entry(owner, "backward_pre", fn)
    legacy = module._is_full_backward_hook is False
    for fn in module._backward_hooks.values():
        yield _entry(owner, "backward_legacy" if legacy else "backward", fn)


def _forward_flags(key: int, with_kwargs: Any, always_called: Any) -> tuple[str, ...]:
    """The registration flags of forward hook ``key`` (module or global registry)."""
    return tuple(
        flag
        for flag, present in (
            ("with_kwargs", key in with_kwargs),
            ("always_call", key in always_called),
        )
        if present
    )


def _global_entries() -> Iterator[HookEntry]:
    owner = GLOBAL_OWNER
    for fn in torch_module._global_forward_pre_hooks.values():
        yield _entry(owner, "global_forward_pre", fn)
    kwargs_fwd = torch_module._global_forward_hooks_with_kwargs
    always = torch_module._global_forward_hooks_always_called
    for key, fn in torch_module._global_forward_hooks.items():
        yield _entry(owner, "global_forward", fn, _forward_flags(key, kwargs_fwd, always))
    for fn in torch_module._global_backward_pre_hooks.values():
        yield _entry(owner, "global_backward_pre", fn)
    legacy = torch_module._global_is_full_backward_hook is False
    for fn in torch_module._global_backward_hooks.values():
        yield _entry(owner, "global_backward_legacy" if legacy else "global_backward", fn)


def _tensor_entries(tensor: torch.Tensor, owner: str) -> Iterator[HookEntry]:
    hooks = tensor._backward_hooks
    if hooks:
        for fn in hooks.values():
            yield _entry(owner, "tensor", fn)
    post = getattr(tensor, "_post_accumulate_grad_hooks", None)
    if post:
        for fn in post.values():
            yield _entry(owner, "post_accumulate", fn)
    if not tensor.is_leaf and tensor.retains_grad:
        yield HookEntry(owner=owner, kind="retains_grad", hook="retain_grad")


def _node_entries(tensor: torch.Tensor) -> Iterator[HookEntry]:
    if not tensor.requires_grad:
        return
    node: Any = tensor.grad_fn
    if node is None:
        node = torch.autograd.graph.get_gradient_edge(tensor).node
    owner = node.name()
    post, pre = node_hook_tables(node)
    kinds: tuple[tuple[Any, HookKind], ...] = ((pre, "node_pre"), (post, "node_post"))
    for table, kind in kinds:
        for fn in (table or {}).values():
            flags: tuple[str, ...] = ()
            if isinstance(fn, WrappedHook):
                module = fn.module() if callable(getattr(fn, "module", None)) else None
                label = f"{_LEGACY_FLAG} of {type(module).__name__}" if module else _LEGACY_FLAG
                flags = (label,)
            elif is_torch_callable(fn):
                flags = (_TORCH_FLAG,)
            yield _entry(owner, kind, fn, flags)


def _inplace(module: torch.nn.Module) -> bool:
    return getattr(module, "inplace", False) is True


def inventory(
    subject: torch.nn.Module | torch.Tensor,
    *,
    name: str | None = None,
    include_globals: bool = True,
) -> HookInventory:
    """List every hook attached to a model (and its parameters) or to a tensor.

    Args:
        subject: an ``nn.Module`` (every submodule's forward pre/post hooks, legacy and full
            backward hooks and backward pre-hooks, and its parameters' and buffers' tensor
            and post-accumulate-grad hooks) or a tensor (its tensor hooks,
            post-accumulate-grad hooks, ``retain_grad``, and the pre/post hooks of its
            ``grad_fn``, or of its gradient accumulator for a leaf).
        name: how to call the subject in the output (default: its class, or the tensor's
            shape and dtype).
        include_globals: also list hooks registered for every module
            (``torch.nn.modules.module.register_module_forward_hook`` and kin).

    Returns:
        A :class:`HookInventory`: ``entries`` in module order, then parameters, then
        global hooks; each with the owner, the kind, the callable's name (a
        ``functools.partial`` shows its function and arguments) and where it is defined.
        Reading a node's hooks attaches an empty hook table to it (NOTE [node hook
        tables] in ``gradprobe._patch``).

    Example:
        >>> import torch
        >>> from gradprobe.hooks import inventory
        >>> layer = torch.nn.Linear(2, 2)
        >>> def show(module, args, output):
        ...     pass
        >>> handle = layer.register_forward_hook(show)
        >>> [(entry.owner, entry.kind, entry.hook) for entry in inventory(layer)]
        [('Linear', 'forward', 'show')]
        >>> handle.remove()
    """
    given: object = subject
    entries: list[HookEntry] = []
    legacy: list[tuple[str, bool]] = []
    inplace_hooked: list[str] = []
    if isinstance(given, torch.nn.Module):
        module = given
        root = name or type(module).__name__
        for path, sub in module.named_modules(remove_duplicate=True):
            owner = module_label(sub, path) if path else root
            entries.extend(_module_entries(sub, owner))
            if sub._backward_hooks and sub._is_full_backward_hook is False:
                legacy.append((owner, bool(sub._modules)))
            full = sub._backward_pre_hooks or (
                sub._backward_hooks and sub._is_full_backward_hook is True
            )
            if full and _inplace(sub):
                inplace_hooked.append(owner)
        tensors: Mapping[str, torch.Tensor] = {
            **dict(module.named_parameters()),
            **{key: b for key, b in module.named_buffers() if b.requires_grad},
        }
        for path, tensor in tensors.items():
            entries.extend(_tensor_entries(tensor, path))
        subject_name = root
    elif isinstance(given, torch.Tensor):
        tensor = given
        subject_name = name or describe_tensor(tensor)
        entries.extend(_tensor_entries(tensor, subject_name))
        entries.extend(_node_entries(tensor))
    else:
        msg = (
            f"inventory() lists the hooks of an nn.Module or a torch.Tensor, got "
            f"{describe(given)}. Pass the model (inventory(model)) or a tensor "
            "(inventory(loss))."
        )
        raise GradprobeTypeError(msg)
    if include_globals:
        entries.extend(_global_entries())
        if (
            torch_module._global_backward_hooks
            and torch_module._global_is_full_backward_hook is False
        ):
            legacy.append((GLOBAL_OWNER, False))
    return HookInventory(
        subject=subject_name,
        entries=tuple(entries),
        legacy_modules=tuple(legacy),
        inplace_hooked=tuple(inplace_hooked),
    )
