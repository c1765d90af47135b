"""Case 519 - fixed sinusoidal positional encoding registered as nn.Parameter

Source: https://github.com/henry9zhr/QANet-pytorch/issues/3
        "the final parameter is wrapped with torch.nn.Parameter, is that OK?"
Category: 4 - a step changes what it should and nothing else

Reported symptom:
    The positional-encoding table, which should be the fixed sinusoid of
    "Attention is all you need", is modified by every optimizer step (and by
    weight decay); after training it no longer has its sinusoidal structure.

Root cause:
    PositionalEncoding stores the precomputed table with
    `self.pe = nn.Parameter(pe)`. That registers it as a trainable parameter, so
    model.parameters() hands it to the optimizer and every step changes it. A
    constant belongs in a buffer (register_buffer) or in a Parameter with
    requires_grad=False.

Ground truth a good tool should report:
    The optimizer steps change `pos.pe`, a tensor that is meant to stay constant
    (it is a fixed sinusoidal table); it is registered as a trainable parameter at
    the `self.pe = nn.Parameter(pe)` line.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=64):
        super().__init__()
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(max_len, dtype=torch.float32)[:, None]
        div = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div)
        pe[:, 1::2] = torch.cos(position * div)
        self.pe = nn.Parameter(pe)  # <- CAUSE

    def forward(self, x):
        return x + self.pe[: x.shape[1]]


class Encoder(nn.Module):
    def __init__(self, vocab=20, d_model=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = PositionalEncoding(d_model)
        self.layer = nn.TransformerEncoderLayer(d_model, nhead=2, dim_feedforward=32,
                                                dropout=0.0, batch_first=True)
        self.out = nn.Linear(d_model, vocab)

    def forward(self, tokens):
        return self.out(self.layer(self.pos(self.embed(tokens))))


tokens = torch.randint(0, 20, (128, 12))
target = (tokens + 1) % 20

model = Encoder()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
pe0 = model.pos.pe.detach().clone()

for step in range(25):
    idx = torch.randint(0, 128, (32,))
    logits = model(tokens[idx])
    loss = F.cross_entropy(logits.reshape(-1, 20), target[idx].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"positional table changed by {(model.pos.pe - pe0).abs().max().item():.4f}")
print(f"final loss {loss.item():.4f}")
