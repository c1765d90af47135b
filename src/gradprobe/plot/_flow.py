"""The per-layer gradient-flow chart: mean and max |grad| with vanishing/exploding bands."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch
from torch import Tensor

from gradprobe.errors import GradprobeTypeError, GradprobeValueError, describe
from gradprobe.plot._base import Picture, check_positive

__all__ = ["FlowRow", "GradientFlowChart", "GradientFlowSource"]

FlowRow = tuple[str, float | None, float | None]
"""One layer of a gradient-flow chart: ``(name, mean |grad|, max |grad|)``; None = no grad."""


@runtime_checkable
class GradientFlowSource(Protocol):
    """Anything with a ``gradient_flow()`` method, such as a ``gradprobe.watch`` session."""

    def gradient_flow(self) -> Sequence[tuple[str, Any, Any]]:
        """``(name, mean |grad|, max |grad|)`` per layer, in forward order."""
        ...


class GradientFlowChart(Picture):
    """Mean and max ``|grad|`` per layer on a log scale, with the vanishing and exploding
    bands shaded.

    Args:
        flow: ``(name, mean |grad|, max |grad|)`` per layer (floats, 0-dim tensors, or
            None for a layer without gradient), or any object with a ``gradient_flow()``
            method returning that (a ``gradprobe.watch`` session).
        vanishing: a layer whose mean ``|grad|`` is below this is flagged vanishing.
        exploding: a layer whose max ``|grad|`` is above this (or not finite) is flagged
            exploding.
        title: the chart's title.
        height: in inches; the width grows with the number of layers.

    ``flagged`` maps each flagged layer to ``"vanishing"``, ``"exploding"``, ``"no
    gradient"`` or ``"zero (dead ReLU)"``.

    From a ``gradprobe.watch`` session (anything with ``findings()`` too) the chart flags
    what the session's findings flag, so picture and report agree: vanishing are the
    parameters GP204 names (it judges the L2 norm, not the mean), ``zero (dead ReLU)`` those
    a dead ReLU zeroes (GP205); the thresholds default to the session's own.

    Example:
        >>> from gradprobe.plot import GradientFlowChart
        >>> chart = GradientFlowChart([("a", 1e-2, 1.0), ("b", 0.5, 2e5)])
        >>> chart.flagged
        {'b': 'exploding'}
    """

    def __init__(
        self,
        flow: GradientFlowSource | Sequence[tuple[str, Any, Any]],
        *,
        vanishing: float | None = None,
        exploding: float | None = None,
        title: str = "gradient flow",
        height: float = 3.5,
        dpi: float = 100.0,
    ) -> None:
        rows = flow.gradient_flow() if isinstance(flow, GradientFlowSource) else flow
        self.rows = _flow_rows(rows)
        judged = _judged_by_findings(flow)
        options = getattr(flow, "options", None)
        limits: dict[str, Any] = options() if judged is not None and callable(options) else {}
        vanishing = limits.get("vanishing", 1e-7) if vanishing is None else vanishing
        exploding = limits.get("exploding", 1e4) if exploding is None else exploding
        self.vanishing = check_positive(vanishing, "GradientFlowChart(vanishing=...)")
        self.exploding = check_positive(exploding, "GradientFlowChart(exploding=...)")
        if self.vanishing >= self.exploding:
            msg = (
                f"GradientFlowChart(vanishing={vanishing}, exploding={exploding}): the vanishing "
                "threshold must be below the exploding one."
            )
            raise GradprobeValueError(msg)
        self.title = str(title)
        self.height = check_positive(height, "GradientFlowChart(height=...)")
        self.dpi = check_positive(dpi, "GradientFlowChart(dpi=...)")
        self.flagged: dict[str, str] = {}
        for name, mean, peak in self.rows:
            if mean is None or peak is None:
                self.flagged[name] = "no gradient"
            elif not math.isfinite(peak) or not math.isfinite(mean) or peak > self.exploding:
                self.flagged[name] = "exploding"
            elif judged is not None:
                if name in judged:
                    self.flagged[name] = judged[name]
            elif mean < self.vanishing:
                self.flagged[name] = "vanishing"

    def _figsize(self) -> tuple[float, float]:
        return (min(max(4.0, 1.5 + 0.32 * len(self.rows)), 40.0), self.height)

    def _draw(self, figure: Any) -> None:
        ax = figure.subplots()
        finite = [
            v
            for _, mean, peak in self.rows
            for v in (mean, peak)
            if v is not None and math.isfinite(v) and v > 0
        ]
        low = min([*finite, self.vanishing]) / 10
        high = max([*finite, self.exploding]) * 10
        positions = np.arange(len(self.rows))

        def shown(value: float | None) -> float:
            if value is None or value <= 0:
                return low  # a zero gradient sits on the floor of the log axis
            if not math.isfinite(value):
                return high
            return value

        peaks = [shown(peak) for _, _, peak in self.rows]
        means = [shown(mean) for _, mean, _ in self.rows]
        ax.set_yscale("log")
        ax.set_ylim(low, high)
        ax.axhspan(low, self.vanishing, color="#9ecae1", alpha=0.35, lw=0)
        ax.axhspan(self.exploding, high, color="#fc9272", alpha=0.35, lw=0)
        ax.bar(positions, peaks, width=0.8, bottom=low, color=_MAX_COLOR)
        flags = [self.flagged.get(name, "") for name, _, _ in self.rows]
        ax.bar(positions, means, width=0.5, bottom=low, color=[_COLORS[f] for f in flags])
        ax.text(0.01, 0.02, f"vanishing < {self.vanishing:g}", transform=ax.transAxes, va="bottom")
        ax.text(0.01, 0.98, f"exploding > {self.exploding:g}", transform=ax.transAxes, va="top")
        ax.set_xticks(positions)
        ax.set_xticklabels([name for name, _, _ in self.rows], rotation=60, ha="right", fontsize=7)
        ax.set_xlim(-0.6, len(self.rows) - 0.4)
        ax.set_ylabel("|grad|")
        ax.set_title(self.title)
        ax.legend(handles=self._legend(), loc="upper right", fontsize=7)

    def _legend(self) -> list[Any]:
        """A patch for max |grad| and for every colour a mean bar of this chart has."""
        from matplotlib.patches import Patch

        used = {self.flagged.get(name, "") for name, _, _ in self.rows}
        handles = [Patch(color=_MAX_COLOR, label="max |grad|")]
        handles.extend(
            Patch(color=_COLORS[flag], label=f"mean |grad|, {flag}" if flag else "mean |grad|")
            for flag in _COLORS
            if flag in used
        )
        return handles


_MAX_COLOR = "#bdbdbd"
# flag -> colour of a layer's mean bar, in legend order ("" is an unflagged layer)
_COLORS = {
    "": "#31a354",
    "vanishing": "#3182bd",
    "zero (dead ReLU)": "#756bb1",
    "exploding": "#de2d26",
    "no gradient": "#636363",
}


def _judged_by_findings(flow: object) -> dict[str, str] | None:
    """For a source with ``findings()`` (a watch session): the parameters its findings call
    vanishing (GP204) or zeroed by a dead ReLU (GP205); None for plain rows."""
    findings = getattr(flow, "findings", None)
    if not isinstance(flow, GradientFlowSource) or not callable(findings):
        return None
    judged: dict[str, str] = {}
    for finding in findings():
        details = getattr(finding, "details", {})
        if finding.code == "GP204":
            judged.update(dict.fromkeys(details.get("norms", {}), "vanishing"))
        elif finding.code == "GP205":
            judged.update(dict.fromkeys(details.get("zero_gradients", ()), "zero (dead ReLU)"))
    return judged


def _flow_rows(rows: object) -> list[FlowRow]:
    if isinstance(rows, (str, bytes)) or not isinstance(rows, Sequence):
        msg = (
            f"GradientFlowChart() needs (name, mean |grad|, max |grad|) rows or an object with "
            f"gradient_flow(), got {describe(rows)}."
        )
        raise GradprobeTypeError(msg)
    if not rows:
        msg = (
            "GradientFlowChart() got no layers, so there is nothing to draw (a watch session "
            "returns none before its first sampled backward pass)."
        )
        raise GradprobeValueError(msg)
    out: list[FlowRow] = []
    for row in rows:
        if not isinstance(row, (tuple, list)) or len(row) != 3 or not isinstance(row[0], str):
            msg = (
                f"GradientFlowChart(): each row must be (name, mean |grad|, max |grad|), got "
                f"{describe(row)}."
            )
            raise GradprobeTypeError(msg)
        out.append((row[0], _flow_value(row[1], row[0]), _flow_value(row[2], row[0])))
    return out


def _flow_value(value: object, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, Tensor) and value.numel() == 1:
        return float(value.detach().to("cpu", torch.float64).reshape(()))
    if isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool):
        return float(value)
    msg = f"GradientFlowChart(): the value for {name!r} must be a number, got {describe(value)}."
    raise GradprobeTypeError(msg)
