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

NOTE [shared patches]
Patches that serve every recording in the process (see NOTE [threads] in
``gradprobe._threads``) are a :class:`SharedPatches`: installed by the first
:meth:`~SharedPatches.acquire`, removed by the last :meth:`~SharedPatches.release`, whatever
the order in which threads leave their blocks. Every installed set is kept on one stack, in
the order installed, and only the top of it is ever undone: a set whose users are gone stays
in place (passing calls through) until every set installed after it is gone too, so a
set never restores a value that another set's wrapper still calls.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

__all__ = ["WRAPPED_ATTR", "HookSwaps", "Patches", "SharedPatches", "node_hook_tables"]

WRAPPED_ATTR = "__gradprobe_hook__"
"""Set on a wrapper gradprobe installs around the user's hook: the user's own hook, which
inventories and error messages show instead of the wrapper."""

_MISSING = object()


class Patches:
    """Attribute replacements on classes and modules (and other undo steps), undone in
    reverse order."""

    def __init__(self) -> None:
        # (owner, name, what was in its own __dict__ or _MISSING, our value), or a callable
        self._undo: list[tuple[Any, str, Any, Any] | Callable[[], object]] = []

    def set(self, owner: Any, name: str, value: Any) -> None:
        """``setattr(owner, name, value)``, remembering what was there."""
        self._undo.append((owner, name, vars(owner).get(name, _MISSING), value))
        setattr(owner, name, value)

    def call(self, step: Callable[[], object]) -> None:
        """Run ``step`` (removing a hook, leaving a context) at :meth:`undo`, in order."""
        self._undo.append(step)

    def targets(self) -> list[tuple[Any, str]]:
        """``(owner, name)`` of every attribute set and not yet undone."""
        return [(entry[0], entry[1]) for entry in self._undo if isinstance(entry, tuple)]

    def undo(self) -> None:
        """Put everything back; never raises; idempotent. A value somebody else put over
        ours since is left in place (ours, under it, only passes calls through)."""
        while self._undo:
            entry = self._undo.pop()
            with contextlib.suppress(Exception):
                if not isinstance(entry, tuple):
                    entry()
                    continue
                owner, name, old, ours = entry
                if vars(owner).get(name, _MISSING) is not ours:
                    continue
                if old is _MISSING:
                    delattr(owner, name)
                else:
                    setattr(owner, name, old)

    def __bool__(self) -> bool:
        return bool(self._undo)


_LOCK = threading.RLock()
_INSTALLED: list[SharedPatches] = []  # installed sets, oldest first (NOTE [shared patches])


class SharedPatches:
    """Patches installed once per process for all their users; NOTE [shared patches].

    ``install(patches)`` puts them in place with :meth:`Patches.set` and
    :meth:`Patches.call`; the functions it installs find at call time whom they serve.
    """

    def __init__(self, install: Callable[[Patches], None]) -> None:
        self._install = install
        self.patches = Patches()
        self._users = 0

    def acquire(self) -> None:
        """Install (the first user) or count one more user."""
        with _LOCK:
            if not any(installed is self for installed in _INSTALLED):
                try:
                    self._install(self.patches)
                except BaseException:
                    self.patches.undo()
                    raise
                _INSTALLED.append(self)
            self._users += 1

    def release(self) -> None:
        """One user fewer; undone when none is left (and no later set is still in place)."""
        with _LOCK:
            if self._users == 0:
                return
            self._users -= 1
            while _INSTALLED and _INSTALLED[-1]._users == 0:
                _INSTALLED.pop().patches.undo()

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Acquired for the ``with`` block."""
        self.acquire()
        try:
            yield
        finally:
            self.release()

    @property
    def installed(self) -> bool:
        """Whether the patches are in place (held, or waiting under a later set)."""
        return any(installed is self for installed in _INSTALLED)

    @staticmethod
    def locked() -> contextlib.AbstractContextManager[Any]:
        """The lock install and removal hold: add to :attr:`patches` under it."""
        return _LOCK


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
