"""Process-wide switches set by a plain call: ``torch.set_grad_enabled(False)`` as a
statement, ``torch.set_default_dtype(...)``, and a grad-mode context entered by calling its
``__enter__()`` by hand (``torch.no_grad().__enter__()``, ``torch.inference_mode()``'s), noted
with the user's frames of the call.

A switch set this way stays set after the function that set it returns; the same switch
set by a ``with`` block or a decorator restores itself and is not noted (it undoes the
note its constructor made). ``model.eval()`` is the third such switch, per module, noted by
:func:`gradprobe._recorder.patching._note_mode`. Only the latest call per switch is kept:
calls are rare (once per evaluation), so noting one costs a walk of the stack.
"""

from __future__ import annotations

import linecache
import sys
from typing import TYPE_CHECKING, Any

import torch

from gradprobe._recorder.events import SwitchSet
from gradprobe._recorder.frames import user_stack
from gradprobe._source import is_user_file

if TYPE_CHECKING:
    from collections.abc import Callable

    from gradprobe._patch import Patches
    from gradprobe._recorder.mode import RecorderMode

__all__ = ["DEFAULT_DTYPE", "GRAD", "note_entered", "switch_patches"]

GRAD = "grad"
DEFAULT_DTYPE = "default_dtype"


def switch_patches(p: Patches, active: Callable[[], tuple[RecorderMode, ...]]) -> None:
    """Patch what sets the switches; ``active()`` gives the recorder modes of the calling
    thread (none: the call passes straight through)."""
    _grad_patches(p, active)
    real_set_dtype = torch.set_default_dtype

    def set_default_dtype(d: Any) -> None:
        real_set_dtype(d)
        modes = active()
        if modes and _by_user(caller := sys._getframe(1)):
            note = SwitchSet(str(d), user_stack(caller))
            for mode in modes:
                mode.events.switches[DEFAULT_DTYPE] = note

    p.set(torch, "set_default_dtype", set_default_dtype)


def _by_user(caller: Any) -> bool:
    """Whether the user's code made the call: torch sets and restores the grad mode around
    every optimizer step with plain calls, which are torch's business."""
    return is_user_file(caller.f_code.co_filename)


def note_entered(modes: tuple[RecorderMode, ...], caller: Any, name: str) -> None:
    """Note a grad-mode context (``no_grad``, ``inference_mode``) whose ``__enter__()`` the
    user's code called by hand: nothing calls its ``__exit__`` (a ``with`` block would)."""
    if modes and _by_hand(caller):
        note = SwitchSet("False", user_stack(caller), f"torch.{name}().__enter__()")
        for mode in modes:
            mode.events.switches[GRAD] = note


def _by_hand(caller: Any) -> bool:
    """Whether the user's line calls ``__enter__`` itself rather than entering a ``with``
    block (which has no ``__enter__`` in its text); read only for the user's calls."""
    filename = caller.f_code.co_filename
    return is_user_file(filename) and "__enter__" in linecache.getline(filename, caller.f_lineno)


def _grad_patches(p: Patches, active: Callable[[], tuple[RecorderMode, ...]]) -> None:
    cls = torch.set_grad_enabled
    real_init, real_enter, real_call = cls.__init__, cls.__enter__, cls.__call__

    def init(self: Any, mode_: bool) -> None:
        real_init(self, mode_)
        modes = active()
        if modes and _by_user(caller := sys._getframe(1)):
            note = SwitchSet(str(bool(mode_)), user_stack(caller))
            for mode in modes:
                switches = mode.events.switches
                mode.grad_switch = (id(self), switches.get(GRAD))
                switches[GRAD] = note

    def scoped(self: Any) -> None:
        """A `with` block or a decorator took this object up: it restores the mode itself,
        so the note its constructor made is taken back."""
        for mode in active():
            made = mode.grad_switch
            if made is not None and made[0] == id(self):
                mode.grad_switch = None
                if made[1] is None:
                    mode.events.switches.pop(GRAD, None)
                else:
                    mode.events.switches[GRAD] = made[1]

    def enter(self: Any) -> None:
        if not _by_hand(sys._getframe(1)):
            scoped(self)
        real_enter(self)

    def call(self: Any, orig_func: Any) -> Any:
        scoped(self)
        return real_call(self, orig_func)

    p.set(cls, "__init__", init)
    p.set(cls, "__enter__", enter)
    p.set(cls, "__call__", call)
