"""Case 961 - one encoder layer registered once and applied at every depth (correct)

Source: https://github.com/espnet/espnet/issues/1278
        (one layer applied twelve times in a loop shares its weights across depth; the
        repeat helper builds twelve layers instead)
Category: correct (invariant 6)
EXPECT: no findings

Reported symptom:
    None. A cross-layer-sharing encoder (as in ALBERT or a universal transformer)
    registers one layer and applies it at every depth on purpose, next to a stack
    of independent layers built by a repeat helper.

Root cause:
    None. Sharing by calling one registered module several times is how weight
    sharing across depth is written; the repeat helper calls the layer factory once
    per layer, so the stack has independent layers.

Ground truth a good tool should report:
    Nothing.
"""
import torch.nn as nn


class EncoderLayer(nn.Module):
    def __init__(self, dim, heads=4):
        super().__init__()
        self.att = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.ReLU(), nn.Linear(2 * dim, dim))
        self.norm1 = nn.LayerNorm(dim)
        self.norm2 = nn.LayerNorm(dim)

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.att(h, h, h, need_weights=False)[0]
        return x + self.ff(self.norm2(x))


def repeat(n, factory):
    return nn.Sequential(*[factory() for _ in range(n)])
