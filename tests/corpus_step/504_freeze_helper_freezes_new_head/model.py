import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return x + self.norm(self.fc(x)).relu()


class Backbone(nn.Module):
    def __init__(self, d_in=16, dim=32, depth=2):
        super().__init__()
        self.stem = nn.Linear(d_in, dim)
        self.blocks = nn.Sequential(*[Block(dim) for _ in range(depth)])

    def forward(self, x):
        return self.blocks(self.stem(x))


class Classifier(nn.Module):
    def __init__(self, n_classes=5):
        super().__init__()
        self.backbone = Backbone()
        self.head = nn.Linear(32, n_classes)

    def forward(self, x):
        return self.head(self.backbone(x))
