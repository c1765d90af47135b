"""Saliency pictures of a tiny CNN: plain gradient, guided backprop, Grad-CAM, feature maps
and gradient flow.

The CNN learns to tell three synthetic shapes apart (a horizontal bar, a vertical bar, a
square) placed at random on a noisy 24x24 canvas; training takes a few seconds on a CPU.
Its activations are written three different ways on purpose: ``nn.ReLU(inplace=True)``,
functional ``F.relu`` and ``clamp(min=0)``. Tools that only replace ``nn.ReLU`` modules
silently fall back to the plain gradient on the last two; gradprobe applies the guided
rule to all three without touching the model.

Run::

    python examples/saliency_demo.py [OUTPUT_DIR]

The PNGs go to OUTPUT_DIR (default: the current directory). Needs the plot extra:
``pip install "gradprobe[plot]"``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from gradprobe.plot import FeatureMapGrid, GradientFlowChart, SaliencyPicture
from gradprobe.saliency import grad_cam, gradient, guided_backprop

SIZE = 24
CLASSES = ("horizontal bar", "vertical bar", "square")
PICTURES = (
    "saliency-gradient.png",
    "saliency-guided.png",
    "saliency-gradcam.png",
    "saliency-features.png",
    "saliency-flow.png",
)


def shapes(
    count: int, generator: torch.Generator, labels: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """``count`` noisy 1x24x24 images, each with one shape, and their labels."""
    images = 0.3 * torch.rand(count, 1, SIZE, SIZE, generator=generator)
    if labels is None:
        labels = torch.randint(0, 3, (count,), generator=generator)
    corners = torch.randint(2, SIZE - 12, (count, 2), generator=generator)
    for i in range(count):
        top, left = corners[i].tolist()
        kind = int(labels[i])
        if kind == 0:
            images[i, 0, top + 4 : top + 7, left : left + 10] = 1.0
        elif kind == 1:
            images[i, 0, top : top + 10, left + 4 : left + 7] = 1.0
        else:
            images[i, 0, top + 1 : top + 8, left + 1 : left + 8] = 1.0
    return images, labels


class ShapeNet(nn.Module):
    """Three convolutions, three ways of writing ReLU."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.act1 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.conv3 = nn.Conv2d(16, 16, 3, padding=1)
        self.head = nn.Linear(16, len(CLASSES))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(self.act1(self.conv1(x)), 2)  # nn.ReLU(inplace=True)
        x = F.relu(self.conv2(x))  # functional ReLU
        x = self.conv3(x).clamp(min=0)  # ReLU written as clamp
        return self.head(x.amax(dim=(2, 3)))


def train(steps: int = 150) -> tuple[ShapeNet, float]:
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(0)
    model = ShapeNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(steps):
        images, labels = shapes(64, generator)
        loss = F.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    images, labels = shapes(256, generator)
    with torch.no_grad():
        accuracy = (model(images).argmax(1) == labels).float().mean().item()
    return model.eval(), accuracy


def gradient_flow(model: nn.Module, images: torch.Tensor, labels: torch.Tensor) -> list:
    """(name, mean |grad|, max |grad|) per parameter after one backward pass: the rows a
    ``gradprobe.watch`` session's ``gradient_flow()`` returns."""
    model.zero_grad()
    F.cross_entropy(model(images), labels).backward()
    rows = [
        (name, p.grad.abs().mean().item(), p.grad.abs().max().item())
        for name, p in model.named_parameters()
        if p.grad is not None
    ]
    model.zero_grad(set_to_none=True)
    return rows


def make_pictures(out: Path) -> list[Path]:
    """Train, explain four test images, and write the PNGs into ``out``."""
    model, accuracy = train()
    print(f"trained ShapeNet: accuracy {'above' if accuracy > 0.9 else 'BELOW'} 90%")
    images, labels = shapes(3, torch.Generator().manual_seed(7), torch.tensor([0, 1, 2]))
    print("classes:", ", ".join(CLASSES[i] for i in labels.tolist()))

    plain = gradient(model, images, target=labels)
    guided = guided_backprop(model, images, target=labels)
    cam = grad_cam(model, images, target=labels, layer=model.conv3)
    print(f"guided backprop: {len(guided.findings)} findings (all three ReLU styles handled)")
    print("guided map differs from the plain gradient:", not torch.equal(guided.map, plain.map))
    print(f"Grad-CAM at layer {cam.layer!r}: map {tuple(cam.activation_map.shape)} upsampled")

    out.mkdir(parents=True, exist_ok=True)
    options = {"panel": 1.3, "dpi": 80}
    written = [
        SaliencyPicture(plain, images, **options).save_png(out / PICTURES[0]),
        SaliencyPicture(guided, images, **options).save_png(out / PICTURES[1]),
        SaliencyPicture(cam, images, cmap="jet", **options).save_png(out / PICTURES[2]),
        FeatureMapGrid(model, images, "conv1", panel=0.9, dpi=80).save_png(out / PICTURES[3]),
        GradientFlowChart(gradient_flow(model, images, labels), dpi=80).save_png(out / PICTURES[4]),
    ]
    for path in written:
        print(f"wrote {path.name}")
    return written


def main(argv: list[str]) -> int:
    make_pictures(Path(argv[1]) if len(argv) > 1 else Path.cwd())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

# expect: trained ShapeNet: accuracy above 90%
# expect: guided backprop: 0 findings (all three ReLU styles handled)
# expect: guided map differs from the plain gradient: True
# expect: Grad-CAM at layer 'conv3': map (3, 12, 12) upsampled
# expect: wrote saliency-guided.png
# expect: wrote saliency-gradcam.png
# expect: wrote saliency-features.png
# expect: wrote saliency-flow.png
