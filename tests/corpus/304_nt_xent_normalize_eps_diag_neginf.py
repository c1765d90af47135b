"""Correct 304 - SimCLR NT-Xent: F.normalize(eps), self-similarity masked with -inf, cosine monitor

Category: correct (numerics: normalisation with eps, -inf diagonal)
What it is:
    Contrastive pre-training of an encoder and projector with the NT-Xent loss: the
    embeddings are L2-normalised with F.normalize(eps=1e-8), the self-similarity diagonal is
    masked with float('-inf') (each row keeps 2n - 1 finite entries, one of them the
    positive target), and F.cosine_similarity(eps=1e-8) adds a small alignment term.
Why a naive tool might flag it:
    A -inf in the logits given to cross_entropy, divisions by vector norms and a
    temperature of 0.1; the targets never point at the -inf entries and the norms are far
    from zero, so the loss and gradients are finite.
Ground truth a good tool should report:
    EXPECT: no findings (correct training code: eps-guarded normalisation, masked diagonal)

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        step 0: nt-xent 2.9037, positive cosine 0.997
        step 1: nt-xent 0.8637, positive cosine 0.990
        step 2: nt-xent 1.5393, positive cosine 0.996
        step 3: nt-xent 0.3709, positive cosine 0.993
        step 4: nt-xent 0.3524, positive cosine 0.994
        step 5: nt-xent 0.2148, positive cosine 0.993
        grads finite: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def augment(x):
    return x + 0.1 * torch.randn_like(x)  # jitter


def nt_xent(z1, z2, temperature=0.1):
    z = F.normalize(torch.cat([z1, z2]), dim=1, eps=1e-8)
    sim = z @ z.t() / temperature
    n = z1.shape[0]
    self_pair = torch.eye(2 * n, dtype=torch.bool)
    sim = sim.masked_fill(self_pair, float("-inf"))  # a sample is not its own negative; 2n-1 entries stay finite per row
    positives = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, positives)


encoder = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 64))
projector = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 16))
params = list(encoder.parameters()) + list(projector.parameters())
opt = torch.optim.SGD(params, lr=0.05, momentum=0.9)
data = torch.randn(32, 20)

for step in range(6):
    x1, x2 = augment(data), augment(data)
    z1, z2 = projector(encoder(x1)), projector(encoder(x2))
    loss = nt_xent(z1, z2)
    alignment = F.cosine_similarity(z1, z2, dim=1, eps=1e-8).mean()
    opt.zero_grad()
    (loss - 0.1 * alignment).backward()
    opt.step()
    print(f"step {step}: nt-xent {loss.item():.4f}, positive cosine {alignment.item():.3f}")
print("grads finite:", all(torch.isfinite(p.grad).all().item() for p in params))
