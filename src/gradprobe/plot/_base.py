"""What every picture shares: loading matplotlib, rendering to PNG/SVG, array helpers."""

from __future__ import annotations

import importlib
import io
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import torch
from torch import Tensor

from gradprobe.errors import GradprobeValueError, MatplotlibNotFoundError, describe

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["MatplotlibNotFoundError", "Picture", "check_positive", "to_numpy", "unit"]

_INSTALL = 'pip install "gradprobe[plot]"'


def _matplotlib() -> tuple[Any, Any, Any]:
    """``(matplotlib, Figure, FigureCanvasAgg)``; imported by name so that gradprobe
    imports, and type-checks, without matplotlib."""
    try:
        mpl = importlib.import_module("matplotlib")
        figure = importlib.import_module("matplotlib.figure")
        agg = importlib.import_module("matplotlib.backends.backend_agg")
    except ImportError as error:
        msg = (
            "gradprobe's pictures are drawn with matplotlib, which is not installed "
            f"({error}). Install the extra: {_INSTALL}"
        )
        raise MatplotlibNotFoundError(msg) from None
    return mpl, figure.Figure, agg.FigureCanvasAgg


_RC = {
    "svg.hashsalt": "gradprobe",  # stable ids in SVG output
    "svg.fonttype": "none",  # text as text: smaller SVG
    "font.size": 9.0,
    "axes.titlesize": 9.0,
}


class Picture:
    """Shared output methods; subclasses implement :meth:`_draw` and :meth:`_figsize`."""

    dpi: float = 100.0

    def _figsize(self) -> tuple[float, float]:
        raise NotImplementedError

    def _draw(self, figure: Any) -> None:
        raise NotImplementedError

    def _render(self, fmt: Literal["png", "svg"]) -> bytes:
        mpl, figure_cls, canvas_cls = _matplotlib()
        with mpl.rc_context(_RC):
            figure = figure_cls(figsize=self._figsize(), dpi=self.dpi, layout="constrained")
            canvas_cls(figure)
            self._draw(figure)
            buffer = io.BytesIO()
            metadata = {"Software": None} if fmt == "png" else {"Date": None, "Creator": None}
            figure.savefig(buffer, format=fmt, dpi=self.dpi, metadata=metadata)
        return buffer.getvalue()

    @property
    def size(self) -> tuple[int, int]:
        """``(width, height)`` of the PNG in pixels."""
        width, height = self._figsize()
        return round(width * self.dpi), round(height * self.dpi)

    def to_png(self) -> bytes:
        """The picture as PNG bytes."""
        return self._render("png")

    def save_png(self, path: str | Path) -> Path:
        """Write :meth:`to_png` to ``path``; returns the path."""
        target = Path(path)
        target.write_bytes(self.to_png())
        return target

    def to_svg(self) -> str:
        """The picture as SVG text."""
        return self._render("svg").decode("utf-8")

    def save_svg(self, path: str | Path) -> Path:
        """Write :meth:`to_svg` to ``path``; returns the path."""
        target = Path(path)
        target.write_text(self.to_svg(), encoding="utf-8")
        return target

    def __repr__(self) -> str:
        width, height = self.size
        return f"<{type(self).__name__} {width}x{height} px>"

    def _repr_png_(self) -> bytes:
        return self.to_png()


def to_numpy(tensor: Tensor) -> NDArray[np.float32]:
    array: NDArray[np.float32] = tensor.detach().to("cpu", torch.float32).numpy()
    return array


def unit(array: NDArray[np.float32]) -> NDArray[np.float32]:
    """Scaled to [0, 1] (a constant array becomes zeros)."""
    finite = np.where(np.isfinite(array), array, 0.0)
    low, high = float(finite.min()), float(finite.max())
    if high <= low:
        return np.zeros_like(finite)
    scaled: NDArray[np.float32] = ((finite - low) / (high - low)).astype(np.float32)
    return scaled


def check_positive(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        msg = f"{what} must be a positive number, got {describe(value)}."
        raise GradprobeValueError(msg)
    return float(value)
