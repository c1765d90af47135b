"""Bag-of-tokens scorer that uses the norm of each token's feature vector."""
import torch
from torch import nn

from utils.ops import row_norm


class NormScorer(nn.Module):
    def __init__(self, in_dim=6, dim=16):
        super().__init__()
        self.proj = nn.Linear(in_dim, dim, bias=False)
        self.out = nn.Linear(1, 1)

    def forward(self, tokens):
        feats = torch.relu(self.proj(tokens))
        norms = row_norm(feats)
        return self.out(norms.mean(dim=1))
