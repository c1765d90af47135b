import torch.nn as nn


class TinyLM(nn.Module):
    def __init__(self, vocab=24, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mix = nn.GRU(dim, dim, batch_first=True)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.lm_head.weight = self.embed.weight

    def forward(self, tokens):
        h, _ = self.mix(self.embed(tokens))
        return self.lm_head(h)
