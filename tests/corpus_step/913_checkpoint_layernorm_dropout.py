"""Case 913 - activation checkpointing with dropout and RNG state preserved (correct)

Source: https://github.com/lucidrains/enformer-pytorch/issues/33
        "they preserve the RNG states unless you turn it off"
Category: correct (invariant 7)
EXPECT: no findings

Reported symptom:
    None. Transformer-style blocks with LayerNorm and dropout, each wrapped in
    torch.utils.checkpoint.

Root cause:
    None. checkpoint keeps its default preserve_rng_state=True, so the
    recomputation in backward replays the same dropout masks and leaves the RNG
    where forward left it; the blocks contain no BatchNorm, so recomputation
    updates no buffers. Backward has no side effect on state.

Ground truth a good tool should report:
    Nothing.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, dim, p=0.2):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Dropout(p), nn.Linear(4 * dim, dim))

    def forward(self, x):
        return x + self.ff(self.norm(x))


class Model(nn.Module):
    def __init__(self, d_in=8, dim=32, depth=2):
        super().__init__()
        self.inp = nn.Linear(d_in, dim)
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])
        self.out = nn.Linear(dim, 1)

    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            h = checkpoint(block, h, use_reentrant=False)
        return self.out(h).squeeze(-1)


x = torch.randn(512, 8)
y = torch.sin(x[:, 0] * 2) + x[:, 1] * x[:, 2]

model = Model()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

for step in range(40):
    idx = torch.randint(0, 512, (64,))
    loss = F.mse_loss(model(x[idx]), y[idx])
    if step == 0:
        first = loss.item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"loss {first:.4f} -> {loss.item():.4f}")
