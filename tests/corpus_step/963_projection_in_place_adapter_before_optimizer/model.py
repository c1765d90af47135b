"""Case 963 - weights projected in place, gains in a ParameterList, adapter added first (correct)

Source: https://discuss.pytorch.org/t/set-nn-parameter-during-training/178163
        (change a trainable parameter by copying into it under no_grad; the optimizer
        keeps updating it)
Category: correct (invariants 2 and 6)
EXPECT: no findings

Reported symptom:
    None. Mixing weights are clamped back into [0, 1] after each step, per-band
    gains live in an nn.ParameterList, and an adapter module is added to the model
    before the optimizer is built.

Root cause:
    None. The projection writes into the existing Parameters under torch.no_grad(),
    so the optimizer keeps holding the tensors the model uses; the ParameterList
    registers the gains; the optimizer is built after the model is final.

Ground truth a good tool should report:
    Nothing.
"""
import torch
import torch.nn as nn


class MixBlock(nn.Module):
    def __init__(self, dim, n_bands=3):
        super().__init__()
        self.fast = nn.Linear(dim, dim)
        self.slow = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.alpha = nn.Parameter(torch.full((dim,), 0.5))
        self.gains = nn.ParameterList([nn.Parameter(torch.ones(dim)) for _ in range(n_bands)])
        self.extra = None

    def forward(self, x):
        h = self.alpha * self.fast(x) + (1 - self.alpha) * self.slow(x)
        for gain in self.gains:
            h = h * gain
        return h if self.extra is None else self.extra(h)


class Regressor(nn.Module):
    def __init__(self, d_in=12, dim=32):
        super().__init__()
        self.inp = nn.Linear(d_in, dim)
        self.blocks = nn.ModuleList([MixBlock(dim) for _ in range(2)])
        self.out = nn.Linear(dim, 1)

    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            h = h + block(h)
        return self.out(h).squeeze(-1)

    def add_adapter(self):
        for block in self.blocks:
            block.extra = nn.Linear(block.fast.out_features, block.fast.out_features)
