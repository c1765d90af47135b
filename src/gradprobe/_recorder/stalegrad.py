"""Which backward calls the gradients a step applies were summed from.

``backward()`` adds into ``.grad``; a step applies whatever is there. The recorder follows a
few parameters per optimizer (spread over its list: first, last and between), by identity,
version counter and values of their ``.grad`` (weak references only), and keeps, per
parameter, the backward calls that added into its gradient since it was last reset:

- a gradient that is gone (``None``), replaced by another tensor, or all zeros was reset
  (``zero_grad()``, ``grad = None``, ``grad.zero_()``, ``grad.data.zero_()``);
- a backward that changed it (made it, or added into it) is appended to its sum; an
  in-place change with values left (clipping, unscaling) keeps the sum;
- an optimizer step records, on its ``step`` event, the sum of each of its followed
  parameters (``StepEvent.sums``): the orders of the ``backward`` events it applies.

The protocol check reads those facts: a step whose sum holds a backward an earlier step
already applied, and a later one, consumed gradients not meant for it. A hand-written
update (``p -= lr * p.grad``) has no step event: it is followed as before, and a ``stale``
event says it applied gradients a backward added onto ones an earlier update used.
Gradients of CUDA tensors are not read (``.any()`` would sync), so they are never followed.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch

from gradprobe._recorder.events import StepEvent

if TYPE_CHECKING:
    from collections.abc import Iterator

    from gradprobe._recorder.events import Events, SourceLine

__all__ = ["StaleGrads"]

_SAMPLES = 2  # parameters followed per hand-written update
_SPREAD = 4  # parameters followed per optimizer: first, last and two between
_SUMMED = 16  # backward calls remembered per followed gradient (the latest)
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
    sums: list[int] = field(default_factory=list)  # backward orders added since the reset


class StaleGrads:
    """Per-optimizer state; called by the recorder's step hooks and its backward wrapper."""

    def __init__(self, events: Events, order: Iterator[int]) -> None:
        self.events = events
        self.order = order  # the recording's event counter
        self.samples: dict[int, list[_Sample]] = {}  # id(optimizer) or _MANUAL -> samples
        self.filled = -1  # order of the latest backward's event

    def summed(
        self, optimizer: object, params: Sequence[torch.Tensor]
    ) -> tuple[tuple[int, ...], ...]:
        """The backward calls summed in each followed gradient ``optimizer`` is about to
        apply (orders of their ``backward`` events), for the parameters that have one. At
        an optimizer's first step its parameters are chosen, holding the latest backward."""
        with torch._C.DisableTorchFunction():
            samples = self.samples.get(id(optimizer))
            if samples is None:
                samples = self._follow(id(optimizer), params)
                for sample in samples:
                    sample.sums[:] = [self.filled] if self.filled >= 0 else []
            found = []
            for sample in samples:
                if _reset(sample):
                    sample.sums.clear()
                if sample.sums:
                    found.append(tuple(sample.sums))
            return tuple(found)

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
        with torch._C.DisableTorchFunction():
            for sample in self._follow(id(optimizer), params):
                self._remember(sample)
                sample.stepped, sample.stepped_version = sample.grad, sample.version

    def _follow(self, key: int, params: Sequence[torch.Tensor]) -> list[_Sample]:
        """The parameters followed for the optimizer ``key``, topped up from ``params``."""
        if key not in self.samples and len(self.samples) >= _OPTIMIZERS:
            return []
        samples = self.samples.setdefault(key, [])
        # follow parameters that still learn: a backbone frozen mid-run gets no more
        # backward() calls, so its gradients would say nothing of the later steps
        samples[:] = [s for s in samples if (p := s.param()) is not None and p.requires_grad]
        if len(samples) < _SPREAD:
            followed = {id(s.param()) for s in samples}
            learning = [
                p
                for p in params
                if p.requires_grad and id(p) not in followed and _cpu_grad(p) is not None
            ]
            for param in _spread(learning, _SPREAD - len(samples)):
                sample = _Sample(weakref.ref(param))
                self._remember(sample)
                samples.append(sample)
        return samples

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
            for key, samples in self.samples.items():
                for sample in samples:
                    untouched = self._untouched(sample)
                    if key == _MANUAL:
                        if not untouched:
                            sample.used = False
                            sample.stale = False
                        sample.pending = untouched and sample.used and _nonzero(sample)
                    elif _reset(sample):
                        sample.sums.clear()
                    self._remember(sample)

    def after_backward(self, line: SourceLine | None, order: int) -> None:
        """After the backward whose event will have ``order``: note what it added into."""
        self.filled = order
        if not self.samples:
            return
        with torch._C.DisableTorchFunction():
            for key, samples in self.samples.items():
                for sample in samples:
                    changed = not self._untouched(sample)
                    if key == _MANUAL:
                        if sample.pending and changed and sample.stale is False:
                            sample.stale = line if line is not None else True
                        sample.pending = False
                    elif changed and _cpu_grad_of(sample) is not None:
                        sample.sums.append(order)
                        del sample.sums[:-_SUMMED]
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


def _cpu_grad_of(sample: _Sample) -> torch.Tensor | None:
    param = sample.param()
    return None if param is None else _cpu_grad(param)


def _reset(sample: _Sample) -> bool:
    """Whether the followed gradient was reset since it was remembered: gone, replaced by
    another tensor, or all zeros (``zero_()`` through ``.data`` keeps the version)."""
    grad = _cpu_grad_of(sample)
    if grad is None or sample.grad is None or sample.grad() is not grad:
        return True
    return _all_zero(grad)


def _all_zero(grad: torch.Tensor) -> bool:
    """Whether every value of ``grad`` is zero: its first and last values decide almost
    every time without reading the whole tensor (a scan of a large gradient at each step
    and backward cost a small model about a tenth of its step)."""
    if grad.is_contiguous() and grad.numel() > 0:
        flat = grad.view(-1)
        if bool(flat[0] != 0) or bool(flat[-1] != 0):
            return False
    return not bool(grad.any())


def _spread(params: list[torch.Tensor], count: int) -> list[torch.Tensor]:
    """Up to ``count`` of ``params``: the last (the head a fine-tune trains), the first, and
    evenly between, so a reset that misses one module of several is seen."""
    if len(params) <= count:
        return params
    step = (len(params) - 1) / (count - 1)
    picks = {round(i * step) for i in range(count)}
    return [params[i] for i in sorted(picks, reverse=True)]


def _nonzero(sample: _Sample) -> bool:
    """A gradient cleared with ``grad.data.zero_()`` keeps its version: look at the values."""
    grad = sample.grad() if sample.grad is not None else None
    return grad is not None and not _all_zero(grad)
