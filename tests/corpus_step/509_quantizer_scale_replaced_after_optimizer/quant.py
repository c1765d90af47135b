import torch
import torch.nn as nn


class FakeQuantize(nn.Module):
    """Symmetric fake quantizer with a learnable scale (LSQ-style straight-through)."""

    def __init__(self, bits=4):
        super().__init__()
        self.qmax = 2 ** (bits - 1) - 1
        self.scale = nn.Parameter(torch.tensor(1.0))

    def forward(self, x):
        s = self.scale.abs() + 1e-6
        xs = x / s
        q = torch.clamp(torch.round(xs), -self.qmax, self.qmax)
        return ((q - xs).detach() + xs) * s
