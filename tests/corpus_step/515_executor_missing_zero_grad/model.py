import torch.nn as nn


class KWSNet(nn.Module):
    def __init__(self, n_mels=10, hidden=32, n_keywords=3):
        super().__init__()
        self.gru = nn.GRU(n_mels, hidden, batch_first=True)
        self.out = nn.Linear(hidden, n_keywords)

    def forward(self, feats):
        h, _ = self.gru(feats)
        return self.out(h[:, -1])
