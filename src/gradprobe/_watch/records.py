"""What a watch session recorded, as plain data: no torch objects, readable after close.

A :class:`StepRecord` per step holds the statistics of every floating-point tensor that a
watched module returned (:class:`OutputRecord`, forward order) and of every gradient that
flowed into those outputs or into a watched parameter (:class:`GradRecord`, the order in
which backward produced them). On sampled steps :class:`TensorStats` has ``min``, ``max``
and the fuller statistics (mean, std, zeros, NaN/Inf counts, norms); on the steps between
them it has only ``total``, the sum of the values, which is what the every-step NaN/Inf
check looks at (``finite`` works on both).

Example:
    >>> stats = TensorStats(shape=(2, 3), dtype="float32", min=-1.0, max=float("nan"))
    >>> stats.finite, stats.numel
    (False, 6)
    >>> stats.to_dict()["max"]
    'nan'
    >>> TensorStats(shape=(4,), dtype="float32", total=float("inf")).finite
    False
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["GradRecord", "OutputRecord", "StepRecord", "TensorStats", "json_number"]


def json_number(value: float | None) -> float | int | str | None:
    """``value`` for JSON: non-finite floats become the strings ``"nan"``, ``"inf"``, ``"-inf"``."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


@dataclass(frozen=True)
class TensorStats:
    """Statistics of one tensor at one step.

    On sampled steps: ``min`` and ``max`` (NaN if the tensor held a NaN), and for
    activations ``mean``, ``std``, ``zero_fraction``, ``nan_count``, ``inf_count`` and
    ``total``, for gradients ``norm`` (L2) and ``mean_abs``. On the steps between samples
    only ``total`` is recorded: the sum of the values, one cheap pass that is NaN or ±Inf
    whenever the tensor holds a NaN or an infinity (and, the one false alarm, when finite
    values are so large that their sum overflows, around ``3.4e38 / numel`` in float32).
    """

    shape: tuple[int, ...]
    dtype: str
    min: float | None = None
    max: float | None = None
    mean: float | None = None
    std: float | None = None
    zero_fraction: float | None = None
    nan_count: int | None = None
    inf_count: int | None = None
    norm: float | None = None
    mean_abs: float | None = None
    total: float | None = None

    @property
    def numel(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)

    @property
    def finite(self) -> bool:
        """False when the tensor held a NaN or an infinity (from ``min`` and ``max`` where
        they were recorded, else from ``total``)."""
        if self.min is not None and self.max is not None:
            return math.isfinite(self.min) and math.isfinite(self.max)
        return self.total is None or math.isfinite(self.total)

    @property
    def has_nan(self) -> bool:
        """True when the tensor held a NaN (min and max propagate NaN). Between samples,
        from a NaN ``total``, which +Inf and -Inf together also give."""
        if self.min is not None and self.max is not None:
            return math.isnan(self.min) or math.isnan(self.max) or bool(self.nan_count)
        return self.total is not None and math.isnan(self.total)

    @property
    def max_abs(self) -> float | None:
        """Largest absolute value (NaN if the tensor held a NaN); None between samples."""
        if self.min is None or self.max is None:
            return None
        if math.isnan(self.min) or math.isnan(self.max):
            return math.nan
        return max(abs(self.min), abs(self.max))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: every field, non-finite numbers as strings."""
        return {
            "shape": list(self.shape),
            "dtype": self.dtype,
            "min": json_number(self.min),
            "max": json_number(self.max),
            "mean": json_number(self.mean),
            "std": json_number(self.std),
            "zero_fraction": json_number(self.zero_fraction),
            "nan_count": self.nan_count,
            "inf_count": self.inf_count,
            "norm": json_number(self.norm),
            "mean_abs": json_number(self.mean_abs),
            "total": json_number(self.total),
        }


def _label(name: str, call: int, output: str) -> str:
    text = (name or "(model)") + output
    return text if call == 0 else f"{text} (call {call + 1})"


@dataclass(frozen=True)
class OutputRecord:
    """One floating-point tensor returned by one call of a watched module.

    ``call`` counts calls of the module within the step from 0; ``output`` is the path of
    the tensor in what the module returned (``""`` for a plain tensor, ``"[0]"``,
    ``"['logits']"``).
    """

    module: str
    type: str
    call: int
    output: str
    stats: TensorStats

    @property
    def label(self) -> str:
        """``module[output]``, with ``(call N)`` for repeated calls; ``(model)`` for the root."""
        return _label(self.module, self.call, self.output)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "module": self.module,
            "type": self.type,
            "call": self.call,
            "output": self.output,
            "stats": self.stats.to_dict(),
        }


@dataclass(frozen=True)
class GradRecord:
    """One gradient seen during backward.

    ``kind="output"``: the gradient flowing into output ``output`` of call ``call`` of
    module ``name``; ``kind="parameter"``: the gradient of parameter ``name`` produced by
    one backward pass (before it is accumulated into ``.grad``).
    """

    kind: Literal["output", "parameter"]
    name: str
    call: int
    output: str
    stats: TensorStats

    @property
    def label(self) -> str:
        """The parameter name, or the module output's label."""
        return self.name if self.kind == "parameter" else _label(self.name, self.call, self.output)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "kind": self.kind,
            "name": self.name,
            "call": self.call,
            "output": self.output,
            "stats": self.stats.to_dict(),
        }


@dataclass(frozen=True)
class StepRecord:
    """Everything recorded during one step.

    ``gradients`` is in the order backward produced them (several backward passes in one
    step follow each other); ``update_ratios`` maps a parameter name to
    ``‖Δp‖ / ‖p‖`` of the optimizer step (sampled steps, when an optimizer was given);
    ``without_grad`` names the watched parameters that got no gradient although the step
    had a backward pass reaching other parameters. ``finished`` is False for the step
    still running when the record was taken.
    """

    step: int
    sampled: bool
    grad_enabled: bool
    backward_passes: int
    activations: tuple[OutputRecord, ...] = ()
    gradients: tuple[GradRecord, ...] = ()
    update_ratios: Mapping[str, float] = field(default_factory=dict)
    without_grad: tuple[str, ...] = ()
    finished: bool = True

    @property
    def output_grads(self) -> tuple[GradRecord, ...]:
        """The gradients that flowed into module outputs, in backward order."""
        return tuple(g for g in self.gradients if g.kind == "output")

    @property
    def parameter_grads(self) -> dict[str, TensorStats]:
        """Parameter name -> statistics of its gradient (the last backward pass of the step)."""
        return {g.name: g.stats for g in self.gradients if g.kind == "parameter"}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "step": self.step,
            "sampled": self.sampled,
            "grad_enabled": self.grad_enabled,
            "backward_passes": self.backward_passes,
            "finished": self.finished,
            "activations": [a.to_dict() for a in self.activations],
            "gradients": [g.to_dict() for g in self.gradients],
            "update_ratios": {k: json_number(v) for k, v in self.update_ratios.items()},
            "without_grad": list(self.without_grad),
        }
