"""One step's recording: flat lists filled by the hooks, stacked once, turned into records.

:class:`StepBuffer` is what the hooks append to (0-d device tensors and host keys).
:meth:`StepBuffer.compact` stacks each list into one device tensor (:class:`Compacted`),
so a finished step costs a handful of tensors however many hooks fired; after the one
host copy of a report, :meth:`Compacted.record` builds the plain :class:`StepRecord`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from gradprobe._watch import _stats
from gradprobe._watch.records import GradRecord, OutputRecord, StepRecord, TensorStats

__all__ = ["OUTPUT", "PARAMETER", "Compacted", "Names", "StepBuffer"]

OUTPUT = 0
PARAMETER = 1

ForwardKey = tuple[int, int, str]  # module index, call, output path
BackwardKey = tuple[int, int, int, str]  # OUTPUT/PARAMETER, module or parameter index, call, path
Meta = tuple[tuple[int, ...], torch.dtype]


@dataclass(frozen=True)
class Names:
    """Names the records need, by index: watched modules and parameters."""

    modules: tuple[str, ...]
    types: tuple[str, ...]
    parameters: tuple[str, ...]


class StepBuffer:
    """The lists one step's hooks append to. Only hooks and the session touch it."""

    __slots__ = (
        "backwards",
        "bwd_keys",
        "bwd_meta",
        "bwd_mm",
        "bwd_norms",
        "calls",
        "fwd_counts",
        "fwd_keys",
        "fwd_meta",
        "fwd_mm",
        "fwd_sums",
        "grad_enabled",
        "number",
        "pl1",
        "pnorm_pos",
        "pnorms",
        "requested",
        "sampled",
        "seen",
        "task",
        "touched",
        "upd",
        "upd_index",
        "whole",
    )

    def __init__(self, number: int, sampled: bool, modules: int) -> None:
        self.number = number
        self.sampled = sampled
        self.grad_enabled = torch.is_grad_enabled()
        self.backwards = 0
        self.task: int | None = None
        # Backward passes asked for all leaves (whole) or only for some (requested).
        self.whole = False
        self.requested: set[int] = set()
        self.calls = [0] * modules
        self.touched = 0
        self.fwd_keys: list[ForwardKey] = []
        self.fwd_meta: list[Meta] = []
        self.fwd_mm: list[Tensor] = []
        self.fwd_sums: list[Tensor] = []
        self.fwd_counts: list[Tensor] = []
        self.bwd_keys: list[BackwardKey] = []
        self.bwd_meta: list[Meta] = []
        self.bwd_mm: list[Tensor] = []
        self.bwd_norms: list[Tensor] = []
        self.pnorms: list[Tensor] = []
        self.pl1: list[Tensor] = []
        self.pnorm_pos: list[int] = []
        self.seen: set[int] = set()
        self.upd: Tensor | None = None
        self.upd_index: list[int] = []

    def compact(self, without_grad: Sequence[int], finished: bool) -> Compacted:
        """Stack every list into one tensor each; copies the host keys (the buffer may
        keep growing when this is a snapshot of a running step)."""
        n_fwd = len(self.fwd_keys)
        n_bwd = len(self.bwd_keys)
        sampled_fwd = len(self.fwd_sums) == 2 * n_fwd
        sampled_bwd = len(self.bwd_norms) == n_bwd and len(self.pl1) == len(self.pnorms)
        return Compacted(
            number=self.number,
            sampled=self.sampled,
            grad_enabled=self.grad_enabled,
            backwards=self.backwards,
            finished=finished,
            fwd_keys=tuple(self.fwd_keys),
            fwd_meta=tuple(self.fwd_meta),
            fwd_mm=_stats.stack(self.fwd_mm[: 2 * n_fwd]).view(-1, 2) if n_fwd else None,
            fwd_sums=(
                _stats.stack(self.fwd_sums[: 2 * n_fwd]).view(-1, 2)
                if n_fwd and sampled_fwd
                else None
            ),
            fwd_counts=(
                _stats.stack(self.fwd_counts[: 3 * n_fwd]).view(-1, 3)
                if n_fwd and sampled_fwd
                else None
            ),
            bwd_keys=tuple(self.bwd_keys),
            bwd_meta=tuple(self.bwd_meta),
            bwd_mm=_stats.stack(self.bwd_mm[: 2 * n_bwd]).view(-1, 2) if n_bwd else None,
            bwd_norms=_stats.stack(self.bwd_norms[:n_bwd]) if n_bwd and sampled_bwd else None,
            pl1=_stats.stack(self.pl1) if self.pl1 and sampled_bwd else None,
            pnorms=_stats.stack(self.pnorms) if self.pnorms else None,
            pnorm_pos=tuple(self.pnorm_pos),
            upd=self.upd,
            upd_index=tuple(self.upd_index),
            without_grad=tuple(without_grad),
        )


@dataclass
class Compacted:
    """A step as a few device tensors plus host keys; ``result`` once copied to the host."""

    number: int
    sampled: bool
    grad_enabled: bool
    backwards: int
    finished: bool
    fwd_keys: tuple[ForwardKey, ...]
    fwd_meta: tuple[Meta, ...]
    fwd_mm: Tensor | None
    fwd_sums: Tensor | None
    fwd_counts: Tensor | None
    bwd_keys: tuple[BackwardKey, ...]
    bwd_meta: tuple[Meta, ...]
    bwd_mm: Tensor | None
    bwd_norms: Tensor | None
    pl1: Tensor | None
    pnorms: Tensor | None
    pnorm_pos: tuple[int, ...]
    upd: Tensor | None
    upd_index: tuple[int, ...]
    without_grad: tuple[int, ...]
    result: StepRecord | None = None

    _FIELDS = ("fwd_mm", "fwd_sums", "fwd_counts", "bwd_mm", "bwd_norms", "pl1", "upd")

    def tensors(self) -> list[Tensor]:
        """The device tensors :meth:`record` needs, in a fixed order."""
        found = (getattr(self, name) for name in self._FIELDS)
        return [t for t in found if t is not None]

    def record(self, values: list[list[float]], names: Names) -> StepRecord:
        """Build (and keep) the plain record from ``values``, the host copies of
        :meth:`tensors` in order; drops the device tensors."""
        it = iter(values)
        got = {name: next(it) if getattr(self, name) is not None else None for name in self._FIELDS}
        fmm, fsums, fcounts = got["fwd_mm"], got["fwd_sums"], got["fwd_counts"]
        activations = []
        for i, ((index, call, path), (shape, dtype)) in enumerate(
            zip(self.fwd_keys, self.fwd_meta, strict=True)
        ):
            assert fmm is not None
            stats = _activation_stats(
                shape,
                dtype,
                fmm[2 * i : 2 * i + 2],
                fsums[2 * i : 2 * i + 2] if fsums is not None else None,
                fcounts[3 * i : 3 * i + 3] if fcounts is not None else None,
                self.sampled,
            )
            activations.append(
                OutputRecord(names.modules[index], names.types[index], call, path, stats)
            )
        bmm, bnorms, pl1 = got["bwd_mm"], got["bwd_norms"], got["pl1"]
        gradients = []
        param_entry = 0
        for i, ((kind, index, call, path), (shape, dtype)) in enumerate(
            zip(self.bwd_keys, self.bwd_meta, strict=True)
        ):
            assert bmm is not None
            l1 = None
            if kind == PARAMETER and pl1 is not None:
                l1 = pl1[param_entry]
                param_entry += 1
            stats = _grad_stats(
                shape,
                dtype,
                bmm[2 * i : 2 * i + 2],
                bnorms[i] if bnorms is not None else None,
                l1,
                self.sampled,
            )
            if kind == PARAMETER:
                gradients.append(GradRecord("parameter", names.parameters[index], 0, "", stats))
            else:
                gradients.append(GradRecord("output", names.modules[index], call, path, stats))
        ratios = got["upd"] or []
        record = StepRecord(
            step=self.number,
            sampled=self.sampled,
            grad_enabled=self.grad_enabled,
            backward_passes=self.backwards,
            activations=tuple(activations),
            gradients=tuple(gradients),
            update_ratios={
                names.parameters[i]: value for i, value in zip(self.upd_index, ratios, strict=True)
            },
            without_grad=tuple(names.parameters[i] for i in self.without_grad),
            finished=self.finished,
        )
        for name in (*self._FIELDS, "pnorms"):
            setattr(self, name, None)
        self.result = record
        return record


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _activation_stats(
    shape: tuple[int, ...],
    dtype: torch.dtype,
    minmax: list[float],
    sums: list[float] | None,
    counts: list[float] | None,
    sampled: bool,
) -> TensorStats:
    shape = tuple(shape)
    if not sampled:  # the pair is (total, total): the NaN/Inf probe
        return TensorStats(shape, _dtype_name(dtype), total=minmax[0])
    if sums is None or counts is None:
        return TensorStats(shape, _dtype_name(dtype), minmax[0], minmax[1])
    n = math.prod(shape)
    total, norm = sums
    mean = total / n
    if n > 1:
        # From the sum and the L2 norm: one pass each, where var_mean is 40x slower on CPU.
        variance = max((norm * norm - n * mean * mean) / (n - 1), 0.0)
        std = math.sqrt(variance) if math.isfinite(variance) else math.nan
    else:
        std = 0.0 if math.isfinite(mean) else math.nan
    nonzero_not_nan, not_nan, finite = counts
    nans = n - round(not_nan)
    return TensorStats(
        shape,
        _dtype_name(dtype),
        minmax[0],
        minmax[1],
        mean=mean,
        std=std,
        zero_fraction=(n - round(nonzero_not_nan) - nans) / n,
        nan_count=nans,
        inf_count=n - round(finite) - nans,
        total=total,
    )


def _grad_stats(
    shape: tuple[int, ...],
    dtype: torch.dtype,
    minmax: list[float],
    norm: float | None,
    l1: float | None,
    sampled: bool,
) -> TensorStats:
    if not sampled:  # the pair is (total, total): the NaN/Inf probe
        return TensorStats(tuple(shape), _dtype_name(dtype), total=minmax[0])
    return TensorStats(
        tuple(shape),
        _dtype_name(dtype),
        minmax[0],
        minmax[1],
        norm=norm,
        mean_abs=None if l1 is None else l1 / math.prod(shape),
    )
