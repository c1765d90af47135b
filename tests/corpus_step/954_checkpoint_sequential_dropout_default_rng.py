"""Case 954 - checkpoint_sequential over dropout blocks, RNG state preserved (correct)

Source: https://github.com/pytorch/pytorch/pull/14253
        (preserve_rng_state makes a checkpointed segment with dropout replay the same
        masks as the forward; it has since become the default)
Category: correct (invariant 7)
EXPECT: no findings

Reported symptom:
    None. An MLP of dropout blocks trained with torch.utils.checkpoint's
    checkpoint_sequential to save memory, and a gradient-noise term drawn after
    backward.

Root cause:
    None. checkpoint_sequential keeps preserve_rng_state=True, so the
    recomputation in backward replays the forward's dropout masks and leaves
    the RNG where it was; the blocks hold no buffers (LayerNorm, not
    BatchNorm), so the rerun changes no state.

Ground truth a good tool should report:
    Nothing.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint_sequential

torch.manual_seed(0)


def block(dim):
    return nn.Sequential(nn.Linear(dim, dim), nn.LayerNorm(dim), nn.GELU(), nn.Dropout(0.25))


body = nn.Sequential(*[block(48) for _ in range(6)])
stem, head = nn.Linear(16, 48), nn.Linear(48, 3)
params = [*stem.parameters(), *body.parameters(), *head.parameters()]
optimizer = torch.optim.AdamW(params, lr=2e-3)

x = torch.randn(256, 16)
y = (x[:, :3] * torch.tensor([1.0, -1.0, 0.5])).argmax(1)

for step in range(20):
    xb, yb = x[(step * 32) % 256:(step * 32) % 256 + 32], y[(step * 32) % 256:(step * 32) % 256 + 32]
    h = stem(xb)
    h = checkpoint_sequential(body, 3, h, use_reentrant=False)
    loss = F.cross_entropy(head(h), yb)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"final loss {loss.item():.4f}")
