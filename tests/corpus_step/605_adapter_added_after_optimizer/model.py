"""Case 605 - bottleneck adapters are added to the model after the optimizer was built

Source: https://github.com/adapter-hub/adapters/issues/260
        "it looks like the optimizer is missing the adapter parameters"
Category: 2 - every gradient backward produces is consumed

Reported symptom:
    Training a T5 with an adapter in a hand-written loop (no Trainer class) leaves the
    adapter weights exactly as they were initialised; only the head changes.

Root cause:
    The script builds the optimizer from model.parameters() first and only then calls
    model.add_adapter(...) and model.train_adapter(...). add_adapter inserts new
    Adapter modules into every block (a ModuleDict per block), so their parameters did
    not exist when the optimizer collected the list; train_adapter then freezes the
    base. Backward fills the adapters gradients at every step and no optimizer holds
    them.

Ground truth a good tool should report:
    The Adapter modules made by add_adapter (model.py) get gradients that no
    optimizer holds: the optimizer in train.py was built before them. Build the
    optimizer after add_adapter / train_adapter (the lines in train.py).
"""
import torch.nn as nn


class Adapter(nn.Module):
    def __init__(self, dim, reduction=4):
        super().__init__()
        self.down = nn.Linear(dim, dim // reduction)
        self.up = nn.Linear(dim // reduction, dim)

    def forward(self, x):
        return x + self.up(self.down(x).relu())


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.norm = nn.LayerNorm(dim)
        self.adapters = nn.ModuleDict()
        self.active = None

    def forward(self, x):
        h = self.ff(self.norm(x))
        if self.active is not None:
            h = self.adapters[self.active](h)
        return x + h


class Encoder(nn.Module):
    def __init__(self, d_in=16, dim=32, depth=3, n_classes=3):
        super().__init__()
        self.inp = nn.Linear(d_in, dim)
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, n_classes)

    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            h = block(h)
        return self.head(h)

    def add_adapter(self, name, reduction=4):
        for block in self.blocks:
            block.adapters[name] = Adapter(block.norm.normalized_shape[0], reduction)

    def train_adapter(self, name):
        for p in self.parameters():
            p.requires_grad_(False)
        for block in self.blocks:
            block.active = name
            block.adapters[name].requires_grad_(True)
        self.head.requires_grad_(True)
