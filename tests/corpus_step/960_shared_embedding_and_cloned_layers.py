"""Case 960 - one embedding module shared by encoder and decoder, layers cloned (correct)

Source: https://github.com/harvardnlp/annotated-transformer/issues/9
        (layers made with copy.deepcopy in a `clones` helper: independent copies)
Category: correct (invariant 6)
EXPECT: no findings

Reported symptom:
    None. A small sequence model shares one embedding module between its encoder
    and decoder and ties the output projection to it; its layers are independent
    deep copies of a prototype; one activation object is reused in a Sequential.

Root cause:
    None. The embedding is one module registered at two places on purpose (the
    shared vocabulary), the tie is one Parameter, the clones are separate objects,
    and an activation without parameters or buffers can sit at several slots.

Ground truth a good tool should report:
    Nothing.
"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def clones(module, n):
    return nn.ModuleList([copy.deepcopy(module) for _ in range(n)])


class Layer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        act = nn.GELU()
        self.ff = nn.Sequential(nn.Linear(dim, dim), act, nn.Linear(dim, dim), act)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return x + self.ff(self.norm(x))


class Half(nn.Module):
    def __init__(self, embed, dim, depth):
        super().__init__()
        self.embed = embed
        self.layers = clones(Layer(dim), depth)

    def forward(self, tokens):
        h = self.embed(tokens)
        for layer in self.layers:
            h = layer(h)
        return h


class Seq2Seq(nn.Module):
    def __init__(self, vocab=40, dim=32, depth=2):
        super().__init__()
        embed = nn.Embedding(vocab, dim)
        self.encoder = Half(embed, dim, depth)
        self.decoder = Half(embed, dim, depth)
        self.out = nn.Linear(dim, vocab, bias=False)
        self.out.weight = embed.weight
        self.norm = nn.LayerNorm(dim)

    def forward(self, src, tgt):
        memory = self.encoder(src).mean(1, keepdim=True)
        return self.out(self.norm(self.decoder(tgt) + memory))


src = torch.randint(0, 40, (256, 10))
tgt = src.flip(1)

model = Seq2Seq()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)

for step in range(20):
    idx = torch.randint(0, 256, (32,))
    logits = model(src[idx], tgt[idx, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 40), tgt[idx, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step == 0:
        first = loss.item()

print(f"loss {first:.4f} -> {loss.item():.4f}")
