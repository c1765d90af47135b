import torch
import torch.nn as nn

from layers import GaborConv1d


class LeafClassifier(nn.Module):
    def __init__(self, n_filters=8, n_classes=3):
        super().__init__()
        self.frontend = GaborConv1d(n_filters, kernel_size=15)
        self.pool = nn.AvgPool1d(4)
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(n_filters * 16, 32), nn.ReLU(), nn.Linear(32, n_classes)
        )

    def forward(self, wav):
        feats = torch.log1p(self.frontend(wav))
        return self.classifier(self.pool(feats))
