"""Saliency maps and Grad-CAM overlays on the input images."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from torch import Tensor

from gradprobe.errors import GradprobeTypeError, GradprobeValueError, describe
from gradprobe.plot._base import Picture, check_positive, to_numpy, unit

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from gradprobe.saliency import SaliencyMap

__all__ = ["SaliencyPicture"]


_TITLES = {"gradient": "gradient", "guided_backprop": "guided backprop", "grad_cam": "Grad-CAM"}


class SaliencyPicture(Picture):
    """Saliency maps, one row per sample: the input, the map, and the map over the input.

    Args:
        saliency: a :class:`~gradprobe.saliency.SaliencyMap`, or a tensor: ``(B, C, H, W)``
            (a gradient; shown as the largest ``|value|`` over channels), ``(B, H, W)`` or
            ``(H, W)`` (a map, e.g. Grad-CAM).
        image: the input batch ``(B, C, H, W)`` or one image ``(C, H, W)``/``(H, W)``,
            ``C`` 1 or 3; each image is scaled to [0, 1] for display. Without it only the
            maps are drawn.
        samples: how many samples (rows) to draw, from the first; at most 16.
        style: ``"heat"`` (a heat map of ``|gradient|``) or ``"rgb"`` (a 3-channel
            gradient shown as colours, grey = 0: the usual guided-backprop picture).
        cmap: matplotlib colour map of the heat maps.
        alpha: opacity of the heat map over the image.
        panel: size of one panel in inches; ``dpi`` pixels per inch.

    Example:
        >>> import torch
        >>> from gradprobe.plot import SaliencyPicture
        >>> picture = SaliencyPicture(torch.rand(2, 8, 8), torch.rand(2, 3, 8, 8), panel=1.0)
        >>> picture.size
        (300, 200)
    """

    def __init__(
        self,
        saliency: SaliencyMap | Tensor,
        image: Tensor | None = None,
        *,
        samples: int | None = None,
        style: Literal["heat", "rgb"] = "heat",
        cmap: str = "inferno",
        alpha: float = 0.5,
        panel: float = 2.0,
        dpi: float = 100.0,
    ) -> None:
        from gradprobe.saliency import SaliencyMap

        if style not in ("heat", "rgb"):
            msg = f"SaliencyPicture(style=...) must be 'heat' or 'rgb', got {describe(style)}."
            raise GradprobeValueError(msg)
        source: object = saliency
        if isinstance(source, SaliencyMap):
            tensor, method = source.map, source.method
            classes = None if source.target is None else source.target.tolist()
        elif isinstance(source, Tensor):
            tensor, method, classes = source, None, None
        else:
            msg = (
                f"SaliencyPicture() draws a SaliencyMap or a tensor, got {describe(saliency)}. "
                "Pass the result of gradprobe.saliency.guided_backprop(...) or grad_cam(...)."
            )
            raise GradprobeTypeError(msg)
        given: object = alpha
        if isinstance(given, bool) or not isinstance(given, (int, float)) or not 0 <= given <= 1:
            msg = f"SaliencyPicture(alpha=...) must be between 0 and 1, got {describe(alpha)}."
            raise GradprobeValueError(msg)
        self.dpi = check_positive(dpi, "SaliencyPicture(dpi=...)")
        self.panel = check_positive(panel, "SaliencyPicture(panel=...)")
        self.cmap = cmap
        self.alpha = float(alpha)
        self.style = style
        self.method = method
        maps = _map_batch(tensor, style)
        count = len(maps)
        if samples is not None:
            if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
                msg = f"SaliencyPicture(samples=...) must be an int >= 1, got {describe(samples)}."
                raise GradprobeValueError(msg)
            count = min(count, samples)
        count = min(count, 16)
        self.maps = maps[:count]
        self.classes = classes[:count] if classes is not None else None
        self.images = _image_batch(image, self.maps) if image is not None else None

    def _columns(self) -> int:
        return 1 if self.images is None else 3

    def _figsize(self) -> tuple[float, float]:
        return (self._columns() * self.panel, len(self.maps) * self.panel)

    def _draw(self, figure: Any) -> None:
        axes = figure.subplots(len(self.maps), self._columns(), squeeze=False)
        name = _TITLES.get(self.method or "", "saliency")
        for row, heat in enumerate(self.maps):
            label = name
            if self.classes is not None:
                label += f", class {self.classes[row]}"
            cells = list(axes[row])
            for ax in cells:
                ax.set_axis_off()
            if self.images is not None:
                image = self.images[row]
                _show_image(cells[0], image)
                cells[0].set_title("input")
                _show_map(cells[1], heat, self.cmap)
                cells[1].set_title(label)
                _show_image(cells[2], image)
                if heat.ndim == 2:
                    cells[2].imshow(heat, cmap=self.cmap, alpha=self.alpha, vmin=0.0, vmax=1.0)
                else:
                    cells[2].imshow(heat, alpha=self.alpha)
                cells[2].set_title("overlay")
            else:
                _show_map(cells[0], heat, self.cmap)
                cells[0].set_title(label)


def _map_batch(tensor: Tensor, style: str) -> list[NDArray[np.float32]]:
    """Per sample: an (H, W) array in [0, 1], or (H, W, 3) for the rgb style."""
    if tensor.ndim == 2:
        tensor = tensor.unsqueeze(0)
    if tensor.ndim == 3 and style == "heat":
        return [unit(to_numpy(sample)) for sample in tensor]
    if tensor.ndim == 4 and style == "heat":
        return [unit(to_numpy(sample.abs().amax(dim=0))) for sample in tensor]
    if tensor.ndim == 4 and tensor.shape[1] == 3:
        out = []
        for sample in tensor:
            array = to_numpy(sample).transpose(1, 2, 0)
            peak = float(np.abs(array).max())
            out.append(
                (array / (2 * peak) + 0.5 if peak > 0 else array * 0 + 0.5).astype(np.float32)
            )
        return out
    if style == "rgb":
        msg = (
            f"SaliencyPicture(style='rgb') needs a (B, 3, H, W) gradient, got shape "
            f"{tuple(tensor.shape)}. Use style='heat' for maps and 1-channel inputs."
        )
    else:
        msg = (
            f"SaliencyPicture() cannot draw a tensor of shape {tuple(tensor.shape)}: give "
            "(B, C, H, W) gradients or (B, H, W)/(H, W) maps."
        )
    raise GradprobeValueError(msg)


def _image_batch(image: object, maps: list[NDArray[np.float32]]) -> list[NDArray[np.float32]]:
    if not isinstance(image, Tensor):
        msg = f"SaliencyPicture(image=...) must be a tensor, got {describe(image)}."
        raise GradprobeTypeError(msg)
    batch = image
    if batch.ndim == 2:
        batch = batch.unsqueeze(0).unsqueeze(0)
    elif batch.ndim == 3:
        batch = batch.unsqueeze(0)
    if batch.ndim != 4 or batch.shape[1] not in (1, 3):
        msg = (
            f"SaliencyPicture(image=...) needs (B, C, H, W) with C 1 or 3, got shape "
            f"{tuple(image.shape)}."
        )
        raise GradprobeValueError(msg)
    if batch.shape[0] < len(maps):
        msg = (
            f"SaliencyPicture(image=...) has {batch.shape[0]} images for {len(maps)} maps; "
            "pass the same batch the map was computed from."
        )
        raise GradprobeValueError(msg)
    out = []
    for sample, heat in zip(batch, maps, strict=False):
        if tuple(sample.shape[1:]) != heat.shape[:2]:
            msg = (
                f"SaliencyPicture(image=...): image size {tuple(sample.shape[1:])} differs from "
                f"the map's {heat.shape[:2]}; pass the input the map was computed from."
            )
            raise GradprobeValueError(msg)
        array = unit(to_numpy(sample))
        out.append(array[0] if array.shape[0] == 1 else array.transpose(1, 2, 0))
    return out


def _show_image(ax: Any, image: NDArray[np.float32]) -> None:
    if image.ndim == 2:
        ax.imshow(image, cmap="gray", vmin=0.0, vmax=1.0, interpolation="nearest")
    else:
        ax.imshow(image, interpolation="nearest")


def _show_map(ax: Any, heat: NDArray[np.float32], cmap: str) -> None:
    if heat.ndim == 2:
        ax.imshow(heat, cmap=cmap, vmin=0.0, vmax=1.0, interpolation="nearest")
    else:
        ax.imshow(heat, interpolation="nearest")
