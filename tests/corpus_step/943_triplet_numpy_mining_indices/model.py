import torch.nn as nn
import torch.nn.functional as F


class Embedder(nn.Module):
    def __init__(self, d_in=20, d_emb=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, 48), nn.ReLU(), nn.Linear(48, d_emb))

    def forward(self, x):
        return F.normalize(self.net(x), dim=1)
