"""Modules run again while a backward runs: a checkpoint rebuilding the activations it did
not keep. Backward should leave the state as forward left it (invariant 7), so a rerun that
updates a module's buffers (a BatchNorm in train mode counts the batch twice) or draws new
random numbers (dropout masks the forward did not use) is noted, with the user's frames
that ran it and the user's ``torch.utils.checkpoint`` call that wrapped the module.

Cheap where nothing is recomputed: one look at the graph task per module call. A rerun
costs a copy of the default generator's state (5 KB on CPU) and of its buffers' versions.
Only the default CPU generator is compared; CUDA generators are not read.
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import torch

from gradprobe._recorder.events import _MAX_EVENTS, Events, Recomputation, SourceLine, Stack
from gradprobe._recorder.frames import _user_line, user_stack

if TYPE_CHECKING:
    from collections.abc import Callable

    from gradprobe._patch import Patches
    from gradprobe._recorder.mode import RecorderMode

__all__ = ["Reruns", "checkpoint_patches", "in_backward"]

_MAX_RERUNS = 64  # recomputations kept: one per checkpointed block and backward is plenty
_TORCH_CHECKPOINT = os.sep + str(Path("torch", "utils", "checkpoint.py"))

in_backward = getattr(torch._C, "_current_graph_task_id", lambda: -1)


@dataclass
class _Running:
    """The outermost module running again, as it started."""

    module: int
    name: str
    rerun: Stack
    checkpoint: SourceLine | None
    torch_checkpoint: bool
    versions: list[tuple[str, torch.Tensor, int]]
    rng: torch.Tensor
    live: bool


class Reruns:
    """What a recording keeps about recomputations (one per recorder mode)."""

    def __init__(self, events: Events) -> None:
        self.events = events
        self.open_checkpoints: list[SourceLine | None] = []  # torch checkpoint calls running
        self._checkpointed: dict[int, SourceLine | None] = {}  # module id -> that call
        self._backwards: list[SourceLine | None] = []
        self._running: _Running | None = None
        # the default generator's state as the running stream left it: at the backward's
        # start, then after each rerun that drew from it
        self._live: torch.Tensor | None = None

    def called(self, module: torch.nn.Module, frame: FrameType | None) -> None:
        """A module call (``frame``: its caller), in forward or run again in backward."""
        if in_backward() == -1:
            if self.open_checkpoints and len(self._checkpointed) < _MAX_EVENTS:
                self._checkpointed.setdefault(id(module), self.open_checkpoints[-1])
        elif self._running is None and self._backwards:
            self._start(module, frame)

    def returned(self, module: torch.nn.Module) -> None:
        running = self._running
        if running is None or running.module != id(module):
            return
        self._running = None
        changed = tuple(
            name for name, buffer, version in running.versions if buffer._version != version
        )
        after = torch.get_rng_state()
        drew = not torch.equal(running.rng, after)
        if running.live:
            self._live = after
        if (changed or drew) and len(self.events.recomputations) < _MAX_RERUNS:
            self.events.recomputations.append(
                Recomputation(
                    self._backwards[-1],
                    running.name,
                    running.rerun,
                    running.checkpoint,
                    running.torch_checkpoint,
                    changed,
                    drew,
                    running.live,
                )
            )

    def backward_started(self, line: SourceLine | None) -> None:
        self._backwards.append(line)
        self._live = torch.get_rng_state()

    def backward_ended(self) -> None:
        if self._backwards:
            self._backwards.pop()
        self._running = None

    def _start(self, module: torch.nn.Module, frame: FrameType | None) -> None:
        line = self._backwards[-1]
        stack = user_stack(frame)
        if line in stack:  # the frames below the backward() call: who ran the module again
            stack = stack[len(stack) - stack[::-1].index(line) :]
        self._running = _Running(
            id(module),
            type(module).__name__,
            stack,
            self._checkpointed.get(id(module)),
            _under_torch_checkpoint(frame),
            [(name, b, b._version) for name, b in module.named_buffers() if not b.is_inference()],
            rng := torch.get_rng_state(),
            self._live is not None and torch.equal(rng, self._live),
        )


def _under_torch_checkpoint(frame: Any) -> bool:
    while frame is not None:
        if frame.f_code.co_filename.endswith(_TORCH_CHECKPOINT):
            return True
        frame = frame.f_back
    return False


def checkpoint_patches(p: Patches, active: Callable[[], tuple[RecorderMode, ...]]) -> None:
    """Note the user's line of each ``torch.utils.checkpoint.checkpoint`` call while it runs
    (``checkpoint_sequential`` calls it too), so a module it reruns is named by that line."""
    module = torch.utils.checkpoint
    real = module.checkpoint

    @functools.wraps(real)
    def checkpoint(function: Any, *args: Any, **kwargs: Any) -> Any:
        modes = active()
        if not modes:
            return real(function, *args, **kwargs)
        line = _user_line(sys._getframe(1))
        for mode in modes:
            mode.reruns.open_checkpoints.append(line)
        try:
            return real(function, *args, **kwargs)
        finally:
            for mode in modes:
                if mode.reruns.open_checkpoints:
                    mode.reruns.open_checkpoints.pop()

    p.set(module, "checkpoint", checkpoint)
