"""Case 589 - a hand-written checkpoint re-runs dropout with fresh masks in backward

Source: https://github.com/openai/guided-diffusion/issues/167
Category: 7 - backward has no side effects on state

Root cause:
    (see nn_utils.py) ResBlock.forward checkpoints _forward, which contains a
    Dropout, through the repository's own CheckpointFunction.
"""
import torch.nn as nn

from nn_utils import checkpoint


class ResBlock(nn.Module):
    def __init__(self, channels, dropout=0.3, use_checkpoint=True):
        super().__init__()
        self.use_checkpoint = use_checkpoint
        self.in_layers = nn.Sequential(nn.LayerNorm(channels), nn.SiLU(), nn.Linear(channels, channels))
        self.out_layers = nn.Sequential(
            nn.LayerNorm(channels), nn.SiLU(), nn.Dropout(dropout), nn.Linear(channels, channels)
        )

    def forward(self, x):
        return checkpoint(self._forward, (x,), self.parameters(), self.use_checkpoint)

    def _forward(self, x):
        return x + self.out_layers(self.in_layers(x))


class Denoiser(nn.Module):
    def __init__(self, dim=24, depth=3):
        super().__init__()
        self.inp = nn.Linear(dim, 32)
        self.blocks = nn.Sequential(*[ResBlock(32) for _ in range(depth)])
        self.out = nn.Linear(32, dim)

    def forward(self, x):
        return self.out(self.blocks(self.inp(x)))
