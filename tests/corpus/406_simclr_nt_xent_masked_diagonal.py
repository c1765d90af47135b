"""Clean 406 - SimCLR NT-Xent loss: cosine similarities divided by a temperature, the
self-similarity diagonal masked with -inf, cross-entropy against the positive view

What it does:
    Two augmented views of each sample go through an encoder + projection head; the
    2N normalised embeddings give a 2N x 2N similarity matrix / tau.  The diagonal is
    filled with -inf (an embedding must not be its own positive) and F.cross_entropy
    picks the other view of the same sample as the target class.

Why it is correct (not a bug):
    -inf logits are fine for log_softmax as long as every row keeps finite entries:
    exp(-inf) = 0 contributes nothing to the normaliser and its gradient is exactly 0,
    so no NaN appears (contrast with fully masked rows, fresh4/402).  masked_fill is
    out-of-place, F.normalize has an eps for zero vectors, and the small temperature
    only scales finite logits.  The loss and all gradients are finite.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        step 0: nt-xent=2.8273 grads finite=True
        step 1: nt-xent=2.6629 grads finite=True
        step 2: nt-xent=2.7137 grads finite=True
        step 3: nt-xent=2.5411 grads finite=True
        step 4: nt-xent=2.2682 grads finite=True
        step 5: nt-xent=1.9837 grads finite=True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def nt_xent(z1, z2, tau=0.1):
    n = z1.shape[0]
    z = F.normalize(torch.cat([z1, z2], dim=0), dim=1)
    sim = z @ z.t() / tau
    self_mask = torch.eye(2 * n, dtype=torch.bool)
    sim = sim.masked_fill(self_mask, float("-inf"))
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, targets)


encoder = nn.Sequential(nn.Linear(20, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 32))
projector = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 16))
params = list(encoder.parameters()) + list(projector.parameters())
optimizer = torch.optim.AdamW(params, lr=1e-3, weight_decay=1e-4)
data = torch.randn(128, 20)


def augment(x):
    return x * (torch.rand_like(x) > 0.2) + 0.05 * torch.randn_like(x)


for step in range(6):
    x = data[torch.randperm(128)[:32]]
    loss = nt_xent(projector(encoder(augment(x))), projector(encoder(augment(x))))
    optimizer.zero_grad()
    loss.backward()
    finite = all(torch.isfinite(p.grad).all() for p in params)
    optimizer.step()
    print(f"step {step}: nt-xent={loss.item():.4f} grads finite={finite}")
