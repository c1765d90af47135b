"""GP134: an optimizer step used gradients accumulated on top of an earlier step's.

``backward()`` adds into ``.grad``. A loop that never calls ``zero_grad()`` (or sets the
gradients to ``None``) feeds every step the sum of all gradients so far, and nothing raises.

The recorder follows a couple of parameters per optimizer, by identity and version counter of
their ``.grad`` (weak references only):

- after a step, the gradient is *used*;
- a ``backward()`` that adds into a used gradient untouched since the step (same tensor, same
  version, not all zeros) makes it *stale*;
- anything else that touches it (``zero_grad``, ``grad = None``, ``grad.zero_()``, a new
  tensor) resets it;
- a step that finds a stale gradient still untouched is the bug: a ``stale`` event on the
  protocol timeline, which the protocol check reads (GP134 from the second one).

A GAN's generator backward also adds into the discriminator's used gradients, but the
discriminator's ``zero_grad()`` resets them before its next step, so it is not reported.
Gradients of CUDA tensors are not read (``.any()`` would sync), so they are never reported.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from gradprobe._recorder.events import StepEvent

if TYPE_CHECKING:
    from collections.abc import Iterator

    from gradprobe._recorder.events import Events, SourceLine

__all__ = ["StaleGrads"]

_SAMPLES = 2  # parameters followed per optimizer
_OPTIMIZERS = 8
_MANUAL = 0  # key of hand-written updates (ids of live optimizers are never 0)


@dataclass
class _Sample:
    param: weakref.ref[torch.Tensor]
    grad: weakref.ref[torch.Tensor] | None = None
    version: int = -1
    used: bool = False  # holds what a step consumed, untouched since
    stale: SourceLine | bool | None = False  # a backward added onto a used gradient: its line
    pending: bool = False
    stepped: weakref.ref[torch.Tensor] | None = None  # the gradient the last step used
    stepped_version: int = -1


class StaleGrads:
    """Per-optimizer state; called by the recorder's step hooks and its backward wrapper."""

    def __init__(self, events: Events, order: Iterator[int]) -> None:
        self.events = events
        self.order = order  # the recording's event counter
        self.samples: dict[int, list[_Sample]] = {}  # id(optimizer) or _MANUAL -> samples

    def before_step(self, optimizer: object, line: SourceLine | None) -> None:
        with torch._C.DisableTorchFunction():
            for sample in self.samples.get(id(optimizer), ()):
                if self._stepped_stale(sample, line):
                    break

    def manual_step(self, param: torch.Tensor, line: SourceLine | None) -> None:
        """A hand-written update of ``param`` (``p -= lr * p.grad`` under no_grad): a step
        for that parameter alone, followed like an optimizer's."""
        with torch._C.DisableTorchFunction():
            samples = self.samples.setdefault(_MANUAL, [])
            sample = next((s for s in samples if s.param() is param), None)
            if sample is None:
                if len(samples) >= _SAMPLES or _cpu_grad(param) is None:
                    return
                sample = _Sample(weakref.ref(param))
                samples.append(sample)
            elif sample is samples[0]:  # one step per update of all the parameters
                self._stepped_stale(sample, line)
            self._remember(sample)
            sample.used = sample.grad is not None
            sample.stale = False

    def after_step(self, optimizer: object, params: Sequence[torch.Tensor]) -> None:
        key = id(optimizer)
        with torch._C.DisableTorchFunction():
            if key not in self.samples and len(self.samples) >= _OPTIMIZERS:
                return
            samples = self.samples.setdefault(key, [])
            # follow parameters that still learn: a backbone frozen mid-run gets no more
            # backward() calls, so its gradients would never look stale
            samples[:] = [s for s in samples if (p := s.param()) is not None and p.requires_grad]
            if len(samples) < _SAMPLES:
                followed = {id(s.param()) for s in samples}
                for param in reversed(params):  # the last layers: the head a fine-tune trains
                    if len(samples) >= _SAMPLES:
                        break
                    if (
                        param.requires_grad
                        and id(param) not in followed
                        and _cpu_grad(param) is not None
                    ):
                        samples.append(_Sample(weakref.ref(param)))
            for sample in samples:
                self._remember(sample)
                sample.used = sample.grad is not None
                sample.stale = False
                sample.stepped, sample.stepped_version = sample.grad, sample.version

    def fresh(self, optimizer: object, params: Sequence[torch.Tensor]) -> bool:
        """Whether ``optimizer``'s gradients hold work no step of it used: a backward
        filled or changed them since its last step (or it never stepped and they exist)."""
        with torch._C.DisableTorchFunction():
            samples = self.samples.get(id(optimizer))
            if samples is None:  # never stepped (or not followed): any gradient is fresh
                return any(p.grad is not None for p in params)
            for sample in samples:
                param = sample.param()
                grad = None if param is None else param.grad
                if grad is None:
                    continue
                stepped = sample.stepped() if sample.stepped is not None else None
                if grad is not stepped or grad._version != sample.stepped_version:
                    return True
            return False

    def before_backward(self) -> None:
        if not self.samples:
            return
        with torch._C.DisableTorchFunction():
            for samples in self.samples.values():
                for sample in samples:
                    untouched = self._untouched(sample)
                    if not untouched:
                        sample.used = False
                        sample.stale = False
                    sample.pending = untouched and sample.used and _nonzero(sample)

    def after_backward(self, line: SourceLine | None) -> None:
        if not self.samples:
            return
        with torch._C.DisableTorchFunction():
            for samples in self.samples.values():
                for sample in samples:
                    if sample.pending and not self._untouched(sample) and sample.stale is False:
                        sample.stale = line if line is not None else True
                    sample.pending = False
                    self._remember(sample)

    def _stepped_stale(self, sample: _Sample, line: SourceLine | None) -> bool:
        """Note a step at ``line`` that uses ``sample``'s stale gradient; whether it did."""
        if sample.stale is False or not self._untouched(sample):
            return False
        backward = sample.stale if sample.stale is not True else None
        self.events.protocol.append(StepEvent(next(self.order), "stale", line, origin=backward))
        return True

    @staticmethod
    def _untouched(sample: _Sample) -> bool:
        param = sample.param()
        grad = None if param is None else _cpu_grad(param)
        return (
            grad is not None
            and sample.grad is not None
            and sample.grad() is grad
            and grad._version == sample.version
        )

    @staticmethod
    def _remember(sample: _Sample) -> None:
        param = sample.param()
        grad = None if param is None else _cpu_grad(param)
        sample.grad = None if grad is None else weakref.ref(grad)
        sample.version = -1 if grad is None else grad._version


def _cpu_grad(param: torch.Tensor) -> torch.Tensor | None:
    grad = param.grad
    if grad is None or grad.device.type != "cpu" or grad.is_sparse:
        return None
    return grad


def _nonzero(sample: _Sample) -> bool:
    """A gradient cleared with ``grad.data.zero_()`` keeps its version: look at the values."""
    grad = sample.grad() if sample.grad is not None else None
    return grad is not None and bool(grad.any())
