"""Pictures of big models for docs/pictures.md: a ResNet-50 and a 24-layer Transformer.

The models are the ones ``benchmarks/bench_render.py`` times (``benchmarks/models.py``,
seeded random weights). The box counts are a Markdown block and the DOT is compared byte
for byte; the SVG depends on the layout engine, so only its presence is checked.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

import gradprobe
from gradprobe.render import save_svg, to_dot

_MODELS = Path(__file__).resolve().parent.parent / "benchmarks" / "models.py"

# image stem -> (model, to_dot/to_svg keywords)
IMAGES: dict[str, tuple[str, dict[str, Any]]] = {
    "views-resnet50-depth1": ("resnet50", {"depth": 1}),
    "views-resnet50-depth2": ("resnet50", {"depth": 2}),
    "views-resnet50": ("resnet50", {}),
}


def _models() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_bench_models", _MODELS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def graphs() -> dict[str, gradprobe.Graph]:
    models = _models()
    resnet = models.resnet50_like()
    image = models.example_input("resnet50_like", batch=2, size=64)
    encoder = models.transformer_encoder(24, d_model=64, nhead=4)
    tokens = torch.randn(2, 8, 64, generator=torch.Generator().manual_seed(0))
    return {
        "resnet50": gradprobe.trace(resnet(image).sum(), model=resnet),
        "transformer": gradprobe.trace(encoder(tokens).sum(), model=encoder),
    }


_DRAWN = re.compile(r"^\s*(?:[nbr]\d+|notes) \[", re.MULTILINE)  # node, box, output, note


def _boxes(dot: str) -> int:
    return len(_DRAWN.findall(dot))


def blocks() -> dict[str, str]:
    found = graphs()
    views: list[tuple[str, dict[str, Any]]] = [
        ("`to_svg(graph)`", {}),
        ("`depth=1`", {"depth": 1}),
        ("`depth=2`", {"depth": 2}),
        ("`depth=3`", {"depth": 3}),
        ("`detail='collapsed'`", {"detail": "collapsed"}),
        ("`detail='full'`", {"detail": "full"}),
    ]
    rows = [
        "| view | ResNet-50 | TransformerEncoder, 24 layers |",
        "|---|---:|---:|",
        f"| nodes in the graph | {len(found['resnet50']):,} | {len(found['transformer']):,} |",
    ]
    for title, kwargs in views:
        counts = [_boxes(to_dot(found[name], **kwargs)) for name in ("resnet50", "transformer")]
        rows.append(f"| {title} | {counts[0]:,} | {counts[1]:,} |")
    return {"views-counts": "\n".join(rows) + "\n"}


def write_images(images: Path) -> list[Path]:
    found = graphs()
    written = []
    for stem, (name, kwargs) in IMAGES.items():
        dot = images / f"{stem}.dot"
        dot.write_text(to_dot(found[name], **kwargs))
        written.append(dot)
        written.append(save_svg(found[name], images / f"{stem}.svg", **kwargs))
    return written


def stale_images(images: Path) -> list[Path]:
    found = graphs()
    stale = []
    for stem, (name, kwargs) in IMAGES.items():
        dot = images / f"{stem}.dot"
        if not dot.exists() or dot.read_text() != to_dot(found[name], **kwargs):
            stale.append(dot)
        if not (images / f"{stem}.svg").exists():
            stale.append(images / f"{stem}.svg")
    return stale
