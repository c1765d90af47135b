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

from layers import EncoderLayer, repeat


class SharedDepthEncoder(nn.Module):
    def __init__(self, d_in=8, dim=32, depth=4, stack=2):
        super().__init__()
        self.inp = nn.Linear(d_in, dim)
        self.shared = EncoderLayer(dim)
        self.depth = depth
        self.stack = repeat(stack, lambda: EncoderLayer(dim))
        self.out = nn.Linear(dim, 1)

    def forward(self, x):
        h = self.inp(x)
        for _ in range(self.depth):
            h = self.shared(h)
        return self.out(self.stack(h)).squeeze(-1)
