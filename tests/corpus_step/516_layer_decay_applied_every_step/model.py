import torch.nn as nn


class TinyViTHead(nn.Module):
    def __init__(self, dim=24, depth=4, out=6):
        super().__init__()
        self.blocks = nn.ModuleList(
            [nn.Sequential(nn.Linear(dim, dim), nn.GELU()) for _ in range(depth)]
        )
        self.head = nn.Linear(dim, out)

    def forward(self, x):
        for block in self.blocks:
            x = x + block(x)
        return self.head(x)
