import torch.nn as nn

from nn_utils import checkpoint


class ResBlock(nn.Module):
    def __init__(self, dim, dropout, use_checkpoint):
        super().__init__()
        self.use_checkpoint = use_checkpoint
        self.layers = nn.Sequential(
            nn.LayerNorm(dim), nn.SiLU(), nn.Linear(dim, dim), nn.Dropout(dropout), nn.Linear(dim, dim)
        )

    def forward(self, x):
        return checkpoint(self._forward, (x,), self.parameters(), self.use_checkpoint)

    def _forward(self, x):
        return x + self.layers(x)


class Denoiser(nn.Module):
    def __init__(self, d=16, dim=48, depth=3, dropout=0.3, use_checkpoint=True):
        super().__init__()
        self.inp = nn.Linear(d, dim)
        self.blocks = nn.Sequential(*[ResBlock(dim, dropout, use_checkpoint) for _ in range(depth)])
        self.out = nn.Linear(dim, d)

    def forward(self, x):
        return self.out(self.blocks(self.inp(x)))
