"""gradprobe.plot: PNG/SVG pictures of saliency maps, gradient flow and feature maps."""

from __future__ import annotations

import io
import struct
import sys
import zlib
from pathlib import Path

import pytest
import torch
from torch import nn

pytest.importorskip("matplotlib")

import matplotlib
from PIL import Image

from gradprobe.errors import GradprobeError, GradprobeTypeError, GradprobeValueError
from gradprobe.plot import (
    FeatureMapGrid,
    GradientFlowChart,
    MatplotlibNotFoundError,
    SaliencyPicture,
)
from gradprobe.saliency import grad_cam, guided_backprop

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from the IHDR chunk, checking the signature and the chunk's CRC."""
    assert data[:8] == PNG_SIGNATURE
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13
    body = data[16 : 16 + length]
    (crc,) = struct.unpack(">I", data[16 + length : 20 + length])
    assert crc == zlib.crc32(kind + body)
    width, height = struct.unpack(">II", body[:8])
    assert data.endswith(b"IEND\xaeB`\x82")
    return width, height


def pixels(data: bytes) -> torch.Tensor:
    """(H, W, 3) uint8 pixels of a PNG."""
    image = Image.open(io.BytesIO(data)).convert("RGB")
    return torch.frombuffer(bytearray(image.tobytes()), dtype=torch.uint8).reshape(
        image.height, image.width, 3
    )


# -- saliency pictures ------------------------------------------------------------------------


def test_saliency_png_has_the_size_of_its_panels_and_is_deterministic() -> None:
    maps = torch.rand(2, 6, 6)
    picture = SaliencyPicture(maps, torch.rand(2, 3, 6, 6), panel=1.0, dpi=50)
    data = picture.to_png()
    assert png_size(data) == (3 * 50, 2 * 50) == picture.size  # 3 columns, 2 rows
    assert picture.to_png() == data
    assert repr(picture) == "<SaliencyPicture 150x100 px>"
    only_maps = SaliencyPicture(maps, panel=1.5, dpi=40)
    assert png_size(only_maps.to_png()) == (60, 120)  # 1 column, 2 rows


def test_saliency_heat_map_is_drawn_where_the_map_is_hot() -> None:
    heat = torch.zeros(1, 4, 4)
    heat[0, 1, 3] = 1.0  # row 1, column 3: upper half, right quarter
    image = pixels(SaliencyPicture(heat, panel=2.0, dpi=50, cmap="viridis").to_png()).int()
    red, green, blue = image.unbind(dim=2)
    cold = ((red - 68).abs() < 12) & (green < 20) & ((blue - 84).abs() < 12)  # viridis(0)
    hot = (red > 230) & (green > 210) & (blue < 60)  # viridis(1)
    area = (cold | hot).nonzero()
    top, left = area.min(0).values.tolist()
    bottom, right = area.max(0).values.tolist()
    assert bottom - top > 50 and right - left > 50  # the map fills most of the panel
    spot = hot.nonzero().float()
    assert len(spot) > 0
    rows = (spot[:, 0].mean() - top) / (bottom - top)
    cols = (spot[:, 1].mean() - left) / (right - left)
    assert 0.25 < rows < 0.5 and 0.75 < cols < 1.0


def test_saliency_picture_of_results(tmp_path: Path) -> None:
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(inplace=True), nn.Flatten())
    model.append(nn.Linear(4 * 8 * 8, 3))
    x = torch.randn(2, 3, 8, 8)
    guided = guided_backprop(model, x, target=[0, 2])
    cam = grad_cam(model, x, target=[0, 2])
    for picture in (
        SaliencyPicture(guided, x, panel=1.0, dpi=40),
        SaliencyPicture(guided, x, style="rgb", panel=1.0, dpi=40),
        SaliencyPicture(cam, x, panel=1.0, dpi=40, samples=1),
    ):
        assert png_size(picture.to_png()) == picture.size
    assert SaliencyPicture(cam, x, samples=1, panel=1.0, dpi=40).size == (120, 40)
    assert SaliencyPicture(guided, x).classes == [0, 2]
    path = guided.save_png(tmp_path / "guided.png", x, panel=1.0, dpi=40)
    assert path.read_bytes() == guided.to_png(x, panel=1.0, dpi=40)
    assert png_size(path.read_bytes()) == (120, 80)


def test_saliency_svg_is_text_and_deterministic(tmp_path: Path) -> None:
    picture = SaliencyPicture(torch.rand(1, 4, 4), torch.rand(1, 1, 4, 4), panel=1.0)
    svg = picture.to_svg()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and svg.rstrip().endswith("</svg>")
    assert "overlay" in svg  # titles are text, not paths
    assert picture.to_svg() == svg
    assert picture.save_svg(tmp_path / "p.svg").read_text() == svg


def test_saliency_picture_errors() -> None:
    with pytest.raises(GradprobeTypeError, match="SaliencyMap or a tensor"):
        SaliencyPicture([1, 2])  # type: ignore[arg-type]
    with pytest.raises(GradprobeValueError, match="style"):
        SaliencyPicture(torch.rand(4, 4), style="neon")  # type: ignore[arg-type]
    with pytest.raises(GradprobeValueError, match=r"shape \(2, 2, 2, 2, 2\)"):
        SaliencyPicture(torch.rand(2, 2, 2, 2, 2))
    with pytest.raises(GradprobeValueError, match=r"style='rgb'\) needs a \(B, 3, H, W\)"):
        SaliencyPicture(torch.rand(1, 1, 4, 4), style="rgb")
    with pytest.raises(GradprobeValueError, match=r"image size \(5, 5\) differs"):
        SaliencyPicture(torch.rand(1, 4, 4), torch.rand(1, 3, 5, 5))
    with pytest.raises(GradprobeValueError, match="C 1 or 3"):
        SaliencyPicture(torch.rand(1, 4, 4), torch.rand(1, 2, 4, 4))
    with pytest.raises(GradprobeValueError, match="1 images for 2 maps"):
        SaliencyPicture(torch.rand(2, 4, 4), torch.rand(1, 1, 4, 4))
    with pytest.raises(GradprobeValueError, match="alpha"):
        SaliencyPicture(torch.rand(4, 4), alpha=2.0)
    with pytest.raises(GradprobeValueError, match="dpi"):
        SaliencyPicture(torch.rand(4, 4), dpi=0)
    with pytest.raises(GradprobeValueError, match="samples"):
        SaliencyPicture(torch.rand(4, 4), samples=0)


# -- gradient flow -----------------------------------------------------------------------------


def test_gradient_flow_flags_by_hand() -> None:
    rows = [
        ("conv1", 1e-3, 5e-2),
        ("conv2", 5e-8, 2e-7),  # mean below 1e-7: vanishing
        ("fc1", 1.0, 3e4),  # max above 1e4: exploding
        ("fc2", float("nan"), 1.0),  # not finite: exploding
        ("unused", None, None),
        ("zero", 0.0, 0.0),  # a zero gradient vanishes
    ]
    chart = GradientFlowChart(rows)
    assert chart.flagged == {
        "conv2": "vanishing",
        "fc1": "exploding",
        "fc2": "exploding",
        "unused": "no gradient",
        "zero": "vanishing",
    }
    custom = GradientFlowChart(rows[:3], vanishing=1e-2, exploding=1e5)
    assert custom.flagged == {"conv1": "vanishing", "conv2": "vanishing"}


def test_gradient_flow_png_size_grows_with_layers_and_is_deterministic() -> None:
    few = GradientFlowChart([("a", 1e-3, 1e-2), ("b", 1e-4, 1e-3)], dpi=50)
    many = GradientFlowChart([(f"layer{i}", 1e-3, 1e-2) for i in range(30)], dpi=50)
    assert png_size(few.to_png()) == (200, 175)  # at least 4 x 3.5 inches
    assert png_size(many.to_png()) == (round((1.5 + 0.32 * 30) * 50), 175)
    assert many.to_png() == many.to_png()
    assert "layer29" in many.to_svg()


def test_gradient_flow_from_a_session_and_tensors() -> None:
    class Session:
        def gradient_flow(self) -> list[tuple[str, torch.Tensor, torch.Tensor]]:
            return [("w", torch.tensor(1e-9), torch.tensor(1e-8)), ("v", torch.tensor(0.1), 0.5)]

    chart = GradientFlowChart(Session())  # type: ignore[arg-type]
    assert chart.rows == [
        ("w", pytest.approx(1e-9), pytest.approx(1e-8)),
        ("v", pytest.approx(0.1), 0.5),
    ]
    assert chart.flagged == {"w": "vanishing"}
    assert png_size(chart.to_png()) == chart.size


def _wide_head(scale: float) -> tuple[nn.Module, object]:
    import gradprobe

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 1000))
    with gradprobe.watch(model, sample_every=1) as session:
        for _ in range(2):
            (model(torch.randn(1, 4)) * scale).sum().backward()
    return model, session


def test_a_session_chart_flags_what_its_findings_flag_not_the_mean() -> None:
    # each bias gradient element is 5e-8: the mean |grad| is below 1e-7, the L2 norm
    # (5e-8 * sqrt(1000) ~ 1.6e-6) is not, and findings() judge the norm
    model, session = _wide_head(5e-8)
    bias = model[0].bias.grad
    assert bias is not None
    assert bias.abs().mean() < 1e-7 < bias.norm()
    assert not [f for f in session.findings() if f.code == "GP204"]  # type: ignore[attr-defined]
    assert GradientFlowChart(session).flagged == {}  # type: ignore[arg-type]
    plain = GradientFlowChart(session.gradient_flow())  # type: ignore[attr-defined]
    assert plain.flagged["0.bias"] == "vanishing"  # plain rows: the documented mean rule
    # below the norm too: the chart and the findings agree again
    _, tiny = _wide_head(1e-12)
    (vanishing,) = [f for f in tiny.findings() if f.code == "GP204"]  # type: ignore[attr-defined]
    chart = GradientFlowChart(tiny)  # type: ignore[arg-type]
    assert set(chart.flagged) == set(vanishing.details["norms"]) == {"0.weight", "0.bias"}


def test_every_colour_of_a_flow_chart_is_in_its_legend() -> None:
    rows = [
        ("ok", 1e-3, 1e-2),
        ("tiny", 1e-9, 1e-8),
        ("huge", 1.0, 1e6),
        ("unused", None, None),
    ]
    chart = GradientFlowChart(rows)
    labels = [patch.get_label() for patch in chart._legend()]
    assert labels == [
        "max |grad|",
        "mean |grad|",
        "mean |grad|, vanishing",
        "mean |grad|, exploding",
        "mean |grad|, no gradient",
    ]
    assert "mean |grad|, vanishing" in chart.to_svg()  # drawn, not only listed
    only_ok = GradientFlowChart(rows[:1])
    assert [patch.get_label() for patch in only_ok._legend()] == ["max |grad|", "mean |grad|"]


def test_gradient_flow_errors() -> None:
    with pytest.raises(GradprobeTypeError, match="gradient_flow"):
        GradientFlowChart(42)  # type: ignore[arg-type]
    with pytest.raises(GradprobeValueError, match="no layers"):
        GradientFlowChart([])
    with pytest.raises(GradprobeTypeError, match=r"\(name, mean \|grad\|, max \|grad\|\)"):
        GradientFlowChart([("a", 1.0)])  # type: ignore[list-item]
    with pytest.raises(GradprobeTypeError, match="value for 'a' must be a number"):
        GradientFlowChart([("a", "big", 1.0)])
    with pytest.raises(GradprobeValueError, match="below the exploding one"):
        GradientFlowChart([("a", 1.0, 1.0)], vanishing=1.0, exploding=0.5)
    with pytest.raises(GradprobeValueError, match="positive"):
        GradientFlowChart([("a", 1.0, 1.0)], vanishing=-1.0)


# -- feature maps ------------------------------------------------------------------------------


def test_feature_map_grid_of_a_model_layer() -> None:
    model = nn.Sequential(nn.Conv2d(1, 5, 3), nn.ReLU(inplace=True), nn.Conv2d(5, 12, 1))
    x = torch.randn(2, 1, 6, 6)
    grid = FeatureMapGrid(model, x, model[0], sample=1, panel=1.0, dpi=40)
    assert (grid.name, grid.channels, grid.columns, grid.rows) == ("0", 5, 3, 2)
    with torch.no_grad():
        expected = model[0](x)[1]
    torch.testing.assert_close(torch.from_numpy(grid.maps), expected)
    assert png_size(grid.to_png()) == (120, 92) == grid.size  # 3x2 panels + a title line
    limited = FeatureMapGrid(model, x, "2", max_channels=8, columns=4, panel=1.0, dpi=40)
    assert (limited.channels, limited.total_channels, limited.rows) == (8, 12, 2)
    assert "8 of 12 channels" in limited.to_svg()
    assert all(len(m._forward_hooks) == 0 for m in model.modules())


def test_feature_map_grid_from_an_activation() -> None:
    grid = FeatureMapGrid.from_activation(torch.rand(4, 3, 3), name="mine", panel=1.0, dpi=40)
    assert (grid.channels, grid.columns, grid.rows, grid.name) == (4, 2, 2, "mine")
    shared = FeatureMapGrid.from_activation(torch.rand(1, 4, 3, 3), normalize="layer", dpi=40)
    assert png_size(shared.to_png()) == shared.size
    with pytest.raises(GradprobeValueError, match=r"\(B, K, H, W\)"):
        FeatureMapGrid.from_activation(torch.rand(2, 3))
    with pytest.raises(GradprobeValueError, match="sample=3"):
        FeatureMapGrid.from_activation(torch.rand(1, 2, 3, 3), sample=3)
    with pytest.raises(GradprobeValueError, match="normalize"):
        FeatureMapGrid.from_activation(torch.rand(1, 2, 3, 3), normalize="global")  # type: ignore[arg-type]
    with pytest.raises(GradprobeValueError, match="max_channels"):
        FeatureMapGrid.from_activation(torch.rand(1, 2, 3, 3), max_channels=0)
    with pytest.raises(GradprobeTypeError, match="needs a tensor"):
        FeatureMapGrid.from_activation([1.0])  # type: ignore[arg-type]


# -- matplotlib: missing, and the user's state ------------------------------------------------


def test_missing_matplotlib_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)  # `import name` now raises ImportError
    chart = GradientFlowChart([("a", 1.0, 2.0)])  # building the data needs no matplotlib
    with pytest.raises(MatplotlibNotFoundError) as info:
        chart.to_png()
    assert isinstance(info.value, GradprobeError) and isinstance(info.value, ImportError)
    assert 'pip install "gradprobe[plot]"' in str(info.value)
    with pytest.raises(MatplotlibNotFoundError):
        SaliencyPicture(torch.rand(3, 3)).to_svg()


def test_users_matplotlib_state_is_untouched() -> None:
    backend = matplotlib.get_backend()
    params = dict(matplotlib.rcParams)
    had_pyplot = "matplotlib.pyplot" in sys.modules
    figures = sys.modules["matplotlib.pyplot"].get_fignums() if had_pyplot else None
    SaliencyPicture(torch.rand(1, 3, 3)).to_png()
    GradientFlowChart([("a", 1.0, 2.0)]).to_svg()
    assert matplotlib.get_backend() == backend
    assert dict(matplotlib.rcParams) == params
    assert ("matplotlib.pyplot" in sys.modules) == had_pyplot
    if had_pyplot:
        assert sys.modules["matplotlib.pyplot"].get_fignums() == figures
