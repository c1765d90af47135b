"""Pictures: saliency maps and Grad-CAM overlays, gradient flow, activation feature maps.

Needs the optional extra ``pip install "gradprobe[plot]"`` (matplotlib); without it every
picture raises :class:`MatplotlibNotFoundError` saying so. Each picture is a small object
holding plain data (numpy arrays, names) and drawing only when asked:

- ``to_png() -> bytes`` / ``save_png(path)``, ``to_svg() -> str`` / ``save_svg(path)``;
- ``_repr_png_()`` so that Jupyter shows it inline.

Drawing uses matplotlib's object API with the Agg canvas (``Figure`` +
``FigureCanvasAgg``): pyplot is never imported, so the user's backend, open figures and
interactive state are untouched, and the few settings gradprobe needs (a fixed SVG id
salt, no timestamps) are applied in an ``rc_context`` that is undone afterwards. The
same picture gives the same PNG bytes with the same matplotlib version; across versions
fonts and anti-aliasing may differ, so compare PNGs by size, not by bytes.

Example:
    >>> import torch
    >>> from gradprobe.plot import GradientFlowChart
    >>> chart = GradientFlowChart([("conv1", 1e-3, 5e-2), ("fc", 2e-9, 1e-8)])
    >>> chart.to_png()[:8]
    b'\\x89PNG\\r\\n\\x1a\\n'
    >>> chart.flagged
    {'fc': 'vanishing'}
"""

from gradprobe.plot._base import MatplotlibNotFoundError
from gradprobe.plot._features import FeatureMapGrid
from gradprobe.plot._flow import FlowRow, GradientFlowChart, GradientFlowSource
from gradprobe.plot._saliency import SaliencyPicture

__all__ = [
    "FeatureMapGrid",
    "FlowRow",
    "GradientFlowChart",
    "GradientFlowSource",
    "MatplotlibNotFoundError",
    "SaliencyPicture",
]
