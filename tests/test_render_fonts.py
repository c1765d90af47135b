"""Labels fit their boxes in a real browser, whatever sans-serif font it has.

Chromium from the OS packages draws the SVGs of three ordinary graphs (the demo, a CNN with
long parameter names, a small ``nn.TransformerEncoder``) once with DejaVu Sans as its only
font and once with Liberation Sans (Helvetica's metrics) only; every text of every node and
cluster must lie inside its box (see ``tests/_chromium.py``). Skipped when there is no
Chromium or the fonts are missing; ``.ci/run`` installs them where it can.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

import gradprobe
from gradprobe import demo
from gradprobe.graph import Graph
from gradprobe.render import svg as render_svg
from gradprobe.render import to_svg

_chromium = pytest.importorskip("_chromium")

pytestmark = [
    pytest.mark.skipif(_chromium.chromium() is None, reason="no system Chromium"),
    pytest.mark.skipif(
        not all(_chromium.fonts_for(setup) for setup in _chromium.FONT_SETUPS),
        reason="needs fonts-dejavu-core and fonts-liberation2",
    ),
    pytest.mark.skipif(render_svg._graphviz_pure() is None, reason="no graphviz-pure"),
]


def _graphs() -> list[Graph]:
    model, x, loss = demo.build()
    graphs = [gradprobe.trace(loss, model=model, names={"x": x, "loss": loss})]
    cnn = nn.Sequential()
    cnn.add_module("feature_extractor_convolution_stem", nn.Conv2d(3, 8, 3))
    cnn.add_module("feature_extractor_batch_normalization", nn.BatchNorm2d(8))
    cnn.add_module("activation", nn.ReLU())
    cnn.add_module("downsampling_convolution_with_long_name", nn.Conv2d(8, 16, 3, stride=2))
    cnn.add_module("global_average_pooling", nn.AdaptiveAvgPool2d(1))
    cnn.add_module("flatten", nn.Flatten())
    cnn.add_module("classification_head_linear_projection", nn.Linear(16, 10))
    images = torch.randn(2, 3, 16, 16)
    graphs.append(gradprobe.trace(cnn(images).sum(), model=cnn, names={"images": images}))
    layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
    encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    tokens = torch.randn(2, 5, 16)
    graphs.append(gradprobe.trace(encoder(tokens).sum(), model=encoder, names={"x": tokens}))
    return graphs


# Sized for Helvetica, as before: the measurement must catch its overflow with DejaVu Sans.
_HELVETICA_SIZED = """<svg xmlns="http://www.w3.org/2000/svg" width="200pt" height="40pt"
 viewBox="0 0 200 40"><g class="node"><title>control</title>
<polygon points="0,0 184.94,0 184.94,20 0,20"/>
<text text-anchor="start" x="4" y="14" font-family="Helvetica,sans-Serif" font-size="10.00"
>encoder.layers.11.self_attn.out_proj.weight</text></g></svg>"""


@pytest.fixture(scope="module")
def svgs() -> list[str]:
    return [to_svg(graph, engine=render_svg._graphviz_pure()) for graph in _graphs()]


@pytest.mark.parametrize("setup", _chromium.FONT_SETUPS)
def test_every_label_fits_its_box(svgs: list[str], setup: str) -> None:
    rows = _chromium.measure([*svgs, _HELVETICA_SIZED], setup)
    control = [row for row in rows if row.group == "control"]
    labels = [row for row in rows if row.group != "control"]
    assert len(labels) > 250  # the three graphs' labels were all measured
    assert {row.svg for row in labels} == {0, 1, 2}
    outside = [row for row in labels if row.over > 0.5]
    assert outside == []
    # the control proves the fonts were in effect and overflow is seen
    assert (control[0].over > 5) == (setup == "dejavu")
