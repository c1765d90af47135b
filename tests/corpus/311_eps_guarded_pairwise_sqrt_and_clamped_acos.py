"""Correct 311 - metric learning with sqrt(d2 + eps) on a distance matrix with zeros, clamped acos

Category: correct (numerics: domain edges guarded)
What it is:
    Batch-hard triplet loss on a pairwise distance matrix whose diagonal (and a duplicated
    sample's pair) is exactly zero: the square root is taken of d2.clamp(min=0) + 1e-12, so
    its derivative stays finite.  A prototype spread regulariser takes acos of the cosine
    matrix with the self-pairs removed before acos and the rest clamped to
    (-1 + 1e-6, 1 - 1e-6).
Why a naive tool might flag it:
    sqrt at (almost) zero and acos near +-1 are the usual NaN-in-backward spots; the eps
    and the clamp keep both derivatives finite.
Ground truth a good tool should report:
    EXPECT: no findings (correct training code: eps-guarded sqrt, clamped acos)

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        step 0: loss 0.6456
        step 1: loss 0.3579
        step 2: loss 0.0672
        step 3: loss -0.0881
        step 4: loss -0.1481
        grads finite: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def pairwise_dist(e):
    sq = (e * e).sum(1)
    d2 = sq[:, None] - 2 * e @ e.t() + sq[None, :]
    return (d2.clamp(min=0.0) + 1e-12).sqrt()  # the diagonal is 0: eps keeps sqrt' finite there


def batch_hard_triplet(emb, labels, margin=0.3):
    d = pairwise_dist(emb)
    same = labels[:, None] == labels[None, :]
    hardest_pos = (d * same.float()).max(1).values
    hardest_neg = (d + 1e3 * same.float()).min(1).values
    return F.relu(hardest_pos - hardest_neg + margin).mean()


def angular_spread(protos, eps=1e-6):
    p = F.normalize(protos, dim=1)
    cos = p @ p.t()
    off = ~torch.eye(len(p), dtype=torch.bool)
    angles = torch.acos(cos[off].clamp(-1 + eps, 1 - eps))  # self-pairs removed before acos, and kept off +-1
    return -angles.view(len(p), -1).min(1).values.mean()


net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
protos = nn.Parameter(torch.randn(4, 8))
opt = torch.optim.Adam(list(net.parameters()) + [protos], lr=1e-2)
x = torch.randn(12, 16)
x[5] = x[4]  # a duplicated sample: distance exactly 0 off the diagonal too
labels = torch.tensor([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3])

for step in range(5):
    emb = net(x)
    loss = batch_hard_triplet(emb, labels) + 0.1 * angular_spread(protos)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step}: loss {loss.item():.4f}")
print("grads finite:", all(torch.isfinite(p.grad).all().item() for p in list(net.parameters()) + [protos]))
