"""The pictures of docs/saliency.md, made by running examples/saliency_demo.py.

PNGs differ from one matplotlib version to the next (fonts, anti-aliasing), so they are
not compared byte for byte: ``stale_images`` only reports the ones that are missing, and
``nox -s docs`` rewrites them all.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

DEMO = Path(__file__).resolve().parent.parent / "examples" / "saliency_demo.py"
NAMES = (
    "saliency-gradient.png",
    "saliency-guided.png",
    "saliency-gradcam.png",
    "saliency-features.png",
    "saliency-flow.png",
)


def _demo() -> ModuleType:
    spec = importlib.util.spec_from_file_location("saliency_demo", DEMO)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def write_images(images: Path) -> list[Path]:
    """Train the demo's tiny CNN (a few seconds) and write its pictures into ``images``."""
    demo = _demo()
    assert tuple(demo.PICTURES) == NAMES, "docs/saliency.md shows these names"
    written: list[Path] = demo.make_pictures(images)
    return written


def stale_images(images: Path) -> list[Path]:
    """The pictures that are missing (present ones are not compared: see the docstring)."""
    return [images / name for name in NAMES if not (images / name).exists()]
