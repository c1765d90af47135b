"""The model behind ``gradprobe demo``: a classifier whose feature extractor never learns.

The bug is a real one (a ``.detach()`` left in ``forward`` after logging or feature
matching): the loss goes down, training runs, and ``features.*.grad`` stays ``None``.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["DetachedClassifier", "build"]


class DetachedClassifier(nn.Module):
    """Two feature layers and a linear head; ``forward`` detaches the features."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU())
        self.head = nn.Linear(16, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features = self.features(x)
        return self.head(features.detach())  # the mistake: cuts features out of the graph


def build(seed: int = 0) -> tuple[DetachedClassifier, torch.Tensor, torch.Tensor]:
    """The model, a batch of inputs and the loss, with fixed random weights."""
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = DetachedClassifier()
    x = torch.randn(4, 8, generator=generator)
    target = torch.tensor([0, 2, 1, 0])
    loss = nn.functional.cross_entropy(model(x), target)
    return model, x, loss
