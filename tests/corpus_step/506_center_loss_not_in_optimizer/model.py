import torch.nn as nn


class Net(nn.Module):
    def __init__(self, d_in=20, feat_dim=2, n_classes=4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, 32), nn.PReLU(), nn.Linear(32, feat_dim))
        self.fc = nn.Linear(feat_dim, n_classes)

    def forward(self, x):
        feats = self.body(x)
        return feats, self.fc(feats)
