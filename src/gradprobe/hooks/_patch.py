"""Temporary replacements that are undone exactly, and access to autograd nodes' hook tables.

:class:`Patches` remembers whether an attribute lived in the owner's own ``__dict__``
(restored as the same object) or was inherited (deleted again), so ``undo()`` leaves classes
and modules byte-for-byte as they were. :class:`HookSwaps` does the same for entries of hook
dictionaries (a module's ``_forward_hooks``, a tensor's ``_backward_hooks``, a node's hook
table): the key and its position stay, only the value is swapped and swapped back.

NOTE [node hook tables]
A C++ autograd node keeps the hooks registered from Python in one ``OrderedDict`` per kind
(post hooks, pre hooks) that Python cannot read directly. ``register_hook`` reuses that
dictionary and returns a handle holding a weak reference to it, so registering a no-op
hook, reading the handle's dictionary and removing the no-op gives the live table. On a
node that had no Python hooks this leaves an empty table attached: PyTorch offers no way to
detach it. An empty table changes no gradient; it costs one dictionary walk per backward.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, MutableMapping
from typing import Any

__all__ = ["HookSwaps", "Patches", "node_hook_tables"]


class Patches:
    """Attribute replacements on classes and modules, undone in reverse order."""

    def __init__(self) -> None:
        self._undo: list[tuple[Any, str, bool, Any]] = []

    def set(self, owner: Any, name: str, value: Any) -> None:
        """``setattr(owner, name, value)``, remembering what was there."""
        own = vars(owner)
        had = name in own
        self._undo.append((owner, name, had, own.get(name)))
        setattr(owner, name, value)

    def undo(self) -> None:
        """Put everything back; never raises; idempotent."""
        while self._undo:
            owner, name, had, old = self._undo.pop()
            with contextlib.suppress(Exception):
                if had:
                    setattr(owner, name, old)
                else:
                    delattr(owner, name)

    def __bool__(self) -> bool:
        return bool(self._undo)


class HookSwaps:
    """Swapped values in hook dictionaries, put back by :meth:`restore`."""

    def __init__(self) -> None:
        self._swaps: list[tuple[MutableMapping[Any, Any], Any, Any, Any]] = []

    def swap(self, table: MutableMapping[Any, Any], key: Any, value: Any) -> None:
        """``table[key] = value`` for an existing key, remembering the old value."""
        self._swaps.append((table, key, table[key], value))
        table[key] = value

    def restore(self) -> None:
        """Put every original value back where our value is still in place."""
        while self._swaps:
            table, key, original, value = self._swaps.pop()
            with contextlib.suppress(Exception):
                if table.get(key) is value:
                    table[key] = original

    def __len__(self) -> int:
        return len(self._swaps)


def _no_post(grad_inputs: Any, grad_outputs: Any) -> None:
    return None


def _no_pre(grad_outputs: Any) -> None:
    return None


def _table(register: Callable[[Any], Any], noop: Callable[..., None]) -> Any:
    try:
        handle = register(noop)
    except (RuntimeError, TypeError, AttributeError):
        return None
    table = handle.hooks_dict_ref()
    handle.remove()
    return table


def node_hook_tables(node: Any) -> tuple[Any, Any]:
    """``(post_hooks, pre_hooks)``: the live hook dictionaries of an autograd node.

    See NOTE [node hook tables] for how, and for what it leaves behind.
    """
    post = _table(node.register_hook, _no_post)
    pre = _table(node.register_prehook, _no_pre)
    return post, pre
