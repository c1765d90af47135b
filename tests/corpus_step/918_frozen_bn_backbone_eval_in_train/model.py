import torch.nn as nn


class Detector(nn.Module):
    def __init__(self, d_in=12, dim=32, n_classes=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(d_in, dim), nn.BatchNorm1d(dim), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Dropout(0.1), nn.Linear(dim, n_classes))

    def forward(self, x):
        return self.head(self.backbone(x))

    def freeze_backbone(self):
        self.backbone.requires_grad_(False)
