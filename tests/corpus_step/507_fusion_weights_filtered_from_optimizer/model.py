import torch
import torch.nn as nn
import torch.nn.functional as F


class FusionNode(nn.Module):
    """Fast normalised fusion of two feature maps (EfficientDet BiFPN)."""

    def __init__(self, channels):
        super().__init__()
        self.w = nn.Parameter(torch.ones(2))
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, a, b):
        w = F.relu(self.w)
        w = w / (w.sum() + 1e-4)
        return F.relu(self.bn(self.conv(w[0] * a + w[1] * b)))


class TinyDet(nn.Module):
    def __init__(self, channels=8, n_classes=3):
        super().__init__()
        self.stem = nn.Conv2d(1, channels, 3, padding=1)
        self.down = nn.Conv2d(channels, channels, 3, stride=2, padding=1)
        self.fpn = nn.ModuleList([FusionNode(channels), FusionNode(channels)])
        self.head = nn.Linear(channels, n_classes)

    def forward(self, x):
        p3 = F.relu(self.stem(x))
        p4 = F.relu(self.down(p3))
        up = F.interpolate(p4, scale_factor=2.0, mode="nearest")
        td = self.fpn[0](p3, up)
        out = self.fpn[1](td, p3)
        return self.head(out.mean(dim=(2, 3)))
