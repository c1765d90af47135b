"""Model builders for gradprobe's benchmarks (``torch.nn`` only, random weights).

Each builder returns a fresh ``nn.Module`` with seeded random weights, in ``train()`` mode
so the autograd graph is the one a training step would build (BatchNorm saves its batch
statistics, dropout is disabled by construction where it exists). Pair a builder with
:func:`example_input` for an input of the right shape::

    >>> model = resnet18_like()
    >>> out = model(example_input("resnet18_like", batch=2, size=32))
    >>> tuple(out.shape)
    (2, 1000)

Autograd-graph sizes with torch 2.13 (``len(gradprobe.trace(out.sum(), model=model))``,
input not requiring grad): ``resnet18_like`` 133 nodes, ``resnet50_like`` 338,
``resnet_deep(48)`` 653, ``transformer_encoder(24)`` 1,342, ``mlp(6)`` 30.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import nn

__all__ = [
    "MODELS",
    "BasicBlock",
    "Bottleneck",
    "ResNet",
    "build",
    "example_input",
    "mlp",
    "resnet18_like",
    "resnet50_like",
    "resnet_deep",
    "transformer_encoder",
]


class BasicBlock(nn.Module):
    """Two 3×3 convolutions with a residual connection (ResNet-18/34)."""

    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = _downsample(inplanes, planes * self.expansion, stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        result: torch.Tensor = self.relu(out + identity)
        return result


class Bottleneck(nn.Module):
    """1×1 → 3×3 → 1×1 convolutions with a residual connection (ResNet-50/101)."""

    expansion = 4

    def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * self.expansion, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = _downsample(inplanes, planes * self.expansion, stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        result: torch.Tensor = self.relu(out + identity)
        return result


def _downsample(inplanes: int, outplanes: int, stride: int) -> nn.Sequential | None:
    if stride == 1 and inplanes == outplanes:
        return None
    return nn.Sequential(
        nn.Conv2d(inplanes, outplanes, 1, stride, bias=False), nn.BatchNorm2d(outplanes)
    )


class ResNet(nn.Module):
    """A torchvision-shaped ResNet: stem, four stages of residual blocks, pooled classifier.

    Parameter names match torchvision's (``layer1.0.conv1.weight``, ``fc.bias``, ...).
    """

    def __init__(
        self,
        block: type[BasicBlock | Bottleneck],
        layers: Sequence[int],
        num_classes: int = 1000,
        width: int = 64,
    ) -> None:
        super().__init__()
        if len(layers) != 4:
            msg = f"ResNet needs four stage depths, got layers={list(layers)!r}."
            raise ValueError(msg)
        self.conv1 = nn.Conv2d(3, width, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        inplanes = width
        stages: list[nn.Sequential] = []
        for index, depth in enumerate(layers):
            planes = width * 2**index
            stride = 1 if index == 0 else 2
            blocks: list[nn.Module] = []
            for b in range(depth):
                blocks.append(block(inplanes, planes, stride if b == 0 else 1))
                inplanes = planes * block.expansion
            stages.append(nn.Sequential(*blocks))
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(inplanes, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        out: torch.Tensor = self.fc(torch.flatten(self.avgpool(x), 1))
        return out


def _seeded(seed: int) -> None:
    torch.manual_seed(seed)


def resnet18_like(num_classes: int = 1000) -> ResNet:
    """ResNet-18 shape: BasicBlock ×[2, 2, 2, 2], 11.7 M parameters, train mode."""
    _seeded(18)
    return ResNet(BasicBlock, [2, 2, 2, 2], num_classes).train()


def resnet50_like(num_classes: int = 1000) -> ResNet:
    """ResNet-50 shape: Bottleneck ×[3, 4, 6, 3], 25.6 M parameters, train mode."""
    _seeded(50)
    return ResNet(Bottleneck, [3, 4, 6, 3], num_classes).train()


def resnet_deep(blocks: int = 48, num_classes: int = 10, width: int = 16) -> ResNet:
    """A deep, narrow BasicBlock ResNet with ``blocks`` blocks spread over four stages.

    ``blocks=48`` gives stages ×[12, 12, 12, 12] and 653 autograd nodes; the narrow
    ``width`` keeps the forward pass cheap, since only the graph's size matters here.
    """
    if blocks < 4:
        msg = f"resnet_deep(blocks={blocks!r}) needs at least 4 blocks, one per stage."
        raise ValueError(msg)
    _seeded(blocks)
    base, extra = divmod(blocks, 4)
    layers = [base + (1 if i < extra else 0) for i in range(4)]
    return ResNet(BasicBlock, layers, num_classes, width=width).train()


def transformer_encoder(layers: int = 4, d_model: int = 256, nhead: int = 8) -> nn.Module:
    """``nn.TransformerEncoder`` of ``layers`` post-norm layers, batch-first, no dropout.

    Train mode, so PyTorch's fused inference fast path is never taken and every op shows
    up in the autograd graph (about 56 nodes per layer). Input: ``(batch, seq, d_model)``.
    """
    _seeded(layers)
    layer = nn.TransformerEncoderLayer(
        d_model, nhead, dim_feedforward=4 * d_model, dropout=0.0, batch_first=True
    )
    # enable_nested_tensor only matters for the inference fast path, and warns otherwise.
    return nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).train()


def mlp(
    depth: int = 6, width: int = 512, in_features: int = 784, out_features: int = 10
) -> nn.Sequential:
    """``depth`` Linear layers with ReLU between them (``depth - 1`` hidden layers of ``width``)."""
    if depth < 1:
        msg = f"mlp(depth={depth!r}) needs at least one layer."
        raise ValueError(msg)
    _seeded(depth)
    sizes = [in_features] + [width] * (depth - 1) + [out_features]
    modules: list[nn.Module] = []
    for i in range(depth):
        modules.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < depth - 1:
            modules.append(nn.ReLU())
    return nn.Sequential(*modules).train()


MODELS = ("resnet18_like", "resnet50_like", "resnet_deep", "transformer_encoder", "mlp")
"""Names accepted by :func:`build` and :func:`example_input`."""


def build(name: str) -> nn.Module:
    """The model called ``name`` (one of :data:`MODELS`) with its default arguments."""
    builders: dict[str, Callable[[], nn.Module]] = {
        "resnet18_like": resnet18_like,
        "resnet50_like": resnet50_like,
        "resnet_deep": resnet_deep,
        "transformer_encoder": transformer_encoder,
        "mlp": mlp,
    }
    try:
        return builders[name]()
    except KeyError:
        msg = f"unknown model {name!r}; choose one of {', '.join(MODELS)}."
        raise ValueError(msg) from None


def example_input(
    name: str, batch: int = 1, *, size: int | None = None, d_model: int = 256
) -> torch.Tensor:
    """A random input for model ``name`` (one of :data:`MODELS`).

    Args:
        name: which builder the input is for.
        batch: leading batch dimension.
        size: image side for the ResNets (default 224; the graph does not depend on it,
            so 32 or 64 traces the same graph faster), sequence length for the
            transformer (default 64), ignored for the MLP.
        d_model: feature size for the transformer; match ``transformer_encoder(d_model=)``.
    """
    generator = torch.Generator().manual_seed(0)
    if name in ("resnet18_like", "resnet50_like", "resnet_deep"):
        side = 224 if size is None else size
        return torch.randn(batch, 3, side, side, generator=generator)
    if name == "transformer_encoder":
        return torch.randn(batch, 64 if size is None else size, d_model, generator=generator)
    if name == "mlp":
        return torch.randn(batch, 784, generator=generator)
    msg = f"unknown model {name!r}; choose one of {', '.join(MODELS)}."
    raise ValueError(msg)
