"""A grid of one layer's feature maps for one sample."""

from __future__ import annotations

import math
from typing import Any, Literal

from torch import Tensor, nn

from gradprobe.errors import GradprobeTypeError, GradprobeValueError, describe
from gradprobe.plot._base import Picture, check_positive, to_numpy

__all__ = ["FeatureMapGrid"]


class FeatureMapGrid(Picture):
    """The channels of one layer's output for one sample, as a grid of small images.

    Args:
        model: the model; with ``x`` and ``layer`` the activation is computed by
            :func:`gradprobe.saliency.activations` (one forward pass under no_grad, a
            forward hook removed afterwards).
        x: the input batch.
        layer: the module, or its name in ``model.named_modules()``.
        sample: which sample of the batch to show.
        max_channels: show at most this many channels (the first ones).
        columns: grid width (default: about square).
        normalize: ``"channel"`` scales each channel to its own range, ``"layer"``
            shares one range so channels can be compared.
        cmap: matplotlib colour map; ``panel`` inches per channel; ``dpi``.

    Use :meth:`from_activation` for an activation tensor you already have.

    Example:
        >>> import torch
        >>> from torch import nn
        >>> from gradprobe.plot import FeatureMapGrid
        >>> model = nn.Sequential(nn.Conv2d(1, 6, 3), nn.ReLU())
        >>> grid = FeatureMapGrid(model, torch.randn(1, 1, 8, 8), "0", panel=1.0)
        >>> grid.channels, grid.size
        (6, (300, 230))
    """

    def __init__(
        self,
        model: nn.Module,
        x: Tensor,
        layer: nn.Module | str,
        *,
        sample: int = 0,
        max_channels: int = 32,
        columns: int | None = None,
        normalize: Literal["channel", "layer"] = "channel",
        cmap: str = "viridis",
        panel: float = 1.2,
        dpi: float = 100.0,
    ) -> None:
        from gradprobe.saliency import activations
        from gradprobe.saliency._inputs import resolve_layer

        activation = activations(model, x, layer)
        name = layer if isinstance(layer, str) else resolve_layer(model, layer, "FeatureMapGrid")[0]
        self._setup(activation, name, sample, max_channels, columns, normalize, cmap, panel, dpi)

    @classmethod
    def from_activation(
        cls,
        activation: Tensor,
        *,
        name: str = "activation",
        sample: int = 0,
        max_channels: int = 32,
        columns: int | None = None,
        normalize: Literal["channel", "layer"] = "channel",
        cmap: str = "viridis",
        panel: float = 1.2,
        dpi: float = 100.0,
    ) -> FeatureMapGrid:
        """A grid of an activation you already have: ``(B, K, H, W)`` or ``(K, H, W)``."""
        given: object = activation
        if not isinstance(given, Tensor):
            msg = f"FeatureMapGrid.from_activation() needs a tensor, got {describe(activation)}."
            raise GradprobeTypeError(msg)
        grid = cls.__new__(cls)
        grid._setup(activation, name, sample, max_channels, columns, normalize, cmap, panel, dpi)
        return grid

    def _setup(
        self,
        activation: Tensor,
        name: str,
        sample: int,
        max_channels: int,
        columns: int | None,
        normalize: str,
        cmap: str,
        panel: float,
        dpi: float,
    ) -> None:
        if activation.ndim == 3:
            activation = activation.unsqueeze(0)
        if activation.ndim != 4:
            msg = (
                f"FeatureMapGrid: the activation of {name!r} has shape {tuple(activation.shape)}; "
                "a feature-map grid needs (B, K, H, W). Pick a convolutional layer."
            )
            raise GradprobeValueError(msg)
        if isinstance(sample, bool) or not isinstance(sample, int):
            msg = f"FeatureMapGrid(sample=...) must be an int, got {describe(sample)}."
            raise GradprobeTypeError(msg)
        if not 0 <= sample < activation.shape[0]:
            msg = (
                f"FeatureMapGrid(sample={sample}) is out of range: the batch has "
                f"{activation.shape[0]} samples."
            )
            raise GradprobeValueError(msg)
        for value, what in ((max_channels, "max_channels"), (columns, "columns")):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                msg = f"FeatureMapGrid({what}=...) must be an int >= 1, got {describe(value)}."
                raise GradprobeValueError(msg)
        if normalize not in ("channel", "layer"):
            msg = (
                f"FeatureMapGrid(normalize=...) must be 'channel' or 'layer', got "
                f"{describe(normalize)}."
            )
            raise GradprobeValueError(msg)
        self.name = name
        self.sample = sample
        self.total_channels = int(activation.shape[1])
        self.maps = to_numpy(activation[sample, :max_channels])
        self.channels = int(self.maps.shape[0])
        self.columns = columns or math.ceil(math.sqrt(self.channels))
        self.rows = math.ceil(self.channels / self.columns)
        self.normalize = normalize
        self.cmap = cmap
        self.panel = check_positive(panel, "FeatureMapGrid(panel=...)")
        self.dpi = check_positive(dpi, "FeatureMapGrid(dpi=...)")

    def _figsize(self) -> tuple[float, float]:
        return (self.columns * self.panel, self.rows * self.panel + 0.3)

    def _draw(self, figure: Any) -> None:
        axes = figure.subplots(self.rows, self.columns, squeeze=False)
        if self.normalize == "layer":
            low, high = float(self.maps.min()), float(self.maps.max())
        for index, ax in enumerate(axes.flat):
            ax.set_axis_off()
            if index >= self.channels:
                continue
            channel = self.maps[index]
            if self.normalize == "channel":
                low, high = float(channel.min()), float(channel.max())
            ax.imshow(
                channel,
                cmap=self.cmap,
                vmin=low,
                vmax=max(high, low + 1e-12),
                interpolation="nearest",
            )
            ax.set_title(str(index), fontsize=7, pad=2)
        shown = (
            f"{self.channels} of {self.total_channels}"
            if self.channels < self.total_channels
            else f"{self.channels}"
        )
        figure.suptitle(f"{self.name}: {shown} channels, sample {self.sample}", fontsize=9)
