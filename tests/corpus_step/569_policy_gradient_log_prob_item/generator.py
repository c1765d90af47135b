import torch
import torch.nn as nn


class CharGenerator(nn.Module):
    def __init__(self, vocab, hidden=32):
        super().__init__()
        self.vocab = vocab
        self.embed = nn.Embedding(vocab, hidden)
        self.cell = nn.GRUCell(hidden, hidden)
        self.out = nn.Linear(hidden, vocab)
        self.hidden = hidden

    def init_hidden(self):
        return torch.zeros(1, self.hidden)

    def forward(self, token, h):
        h = self.cell(self.embed(token), h)
        return self.out(h), h
