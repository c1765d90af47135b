"""Case 530 - checkpoint(preserve_rng_state=False) recomputes dropout with a fresh mask

Source: https://github.com/allenai/OLMo-core/pull/828
        "that recompute draws **fresh** dropout masks, so the gradients are taken with respect to a different sample than the loss was."
Category: 7 - backward has no side effects on state

Reported symptom:
    Turning activation checkpointing off, which should be mathematically neutral,
    changes the loss curve: with checkpointing on the model trains clearly worse.

Root cause:
    The transformer block is checkpointed with preserve_rng_state=False. During
    backward the checkpoint re-runs the block's forward, which draws new dropout
    masks because the RNG state was not restored, and advances the global RNG.
    The gradients are those of a different network sample than the one that
    produced the loss, and backward has consumed random numbers.

Ground truth a good tool should report:
    Backward re-ran dropout with a different mask than forward (gradients do not
    match the loss; the RNG state changed during backward). The checkpoint call
    disables RNG preservation (the `checkpoint(..., preserve_rng_state=False)` line).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, dim, p=0.3):
        super().__init__()
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Dropout(p), nn.Linear(4 * dim, dim))
        self.norm = nn.LayerNorm(dim)

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
            h = checkpoint(block, h, use_reentrant=False, preserve_rng_state=False)  # <- CAUSE
        return self.out(h).squeeze(-1)


x = torch.randn(512, 8)
y = torch.sin(x[:, 0] * 2) + x[:, 1] * x[:, 2]

model = Model()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)

for step in range(30):
    idx = torch.randint(0, 512, (64,))
    loss = F.mse_loss(model(x[idx]), y[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"final loss {loss.item():.4f}")
