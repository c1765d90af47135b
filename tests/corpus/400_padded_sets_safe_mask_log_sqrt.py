"""Clean 400 - padded point sets: masked softmax with a finite fill value, sqrt behind
torch.where with a safe branch, log of probabilities clamped to eps

What it does:
    Each sample is a set of up to 6 points (some sets are empty).  Pairwise
    distances to a learned anchor use sqrt only on a "safe" tensor
    (torch.where(d2 > 0, d2, 1)), so zero distances have a finite gradient.
    Attention pooling fills padded positions with torch.finfo(dtype).min and zeroes
    the pooled vector for empty sets.  The focal-style loss takes
    log(p.clamp(min=1e-6)).

Why it is correct (not a bug):
    These are the standard fixes for the NaN patterns (acos/sqrt at 0, all -inf
    softmax rows, log(0)): a finite fill never makes exp(-inf - -inf); the unselected
    branch of torch.where is fed a safe input so its gradient is finite; the clamp
    bounds the log.  Forward and gradients stay finite even with empty sets and
    duplicate points.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        step 0: loss=0.5625  all grads finite: True
        step 1: loss=0.4404  all grads finite: True
        step 2: loss=0.3721  all grads finite: True
        step 3: loss=0.3378  all grads finite: True
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
MAX_PTS, DIM = 6, 3


class SetClassifier(nn.Module):
    def __init__(self, n_classes=3):
        super().__init__()
        self.anchor = nn.Parameter(torch.zeros(DIM))
        self.point_mlp = nn.Sequential(nn.Linear(DIM + 1, 32), nn.ReLU(), nn.Linear(32, 32))
        self.score = nn.Linear(32, 1)
        self.out = nn.Linear(32, n_classes)

    def forward(self, pts, n_pts):
        d2 = (pts - self.anchor).pow(2).sum(-1)                       # (B, T), may be exactly 0
        safe_d2 = torch.where(d2 > 0, d2, torch.ones_like(d2))
        dist = torch.where(d2 > 0, safe_d2.sqrt(), torch.zeros_like(d2))
        h = self.point_mlp(torch.cat([pts, dist.unsqueeze(-1)], dim=-1))
        mask = torch.arange(MAX_PTS)[None, :] < n_pts[:, None]
        scores = self.score(h).squeeze(-1).masked_fill(~mask, torch.finfo(h.dtype).min)
        w = torch.softmax(scores, dim=1)
        pooled = (w.unsqueeze(-1) * h).sum(1) * (n_pts > 0).float().unsqueeze(-1)
        return torch.softmax(self.out(pooled), dim=-1)


def focal_loss(prob, target, gamma=2.0):
    p_t = prob.gather(1, target.unsqueeze(1)).squeeze(1)
    return (-(1 - p_t) ** gamma * torch.log(p_t.clamp(min=1e-6))).mean()


model = SetClassifier()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
pts = torch.randn(8, MAX_PTS, DIM)
pts[0, 0] = 0.0                                   # a point exactly on the anchor
n_pts = torch.tensor([6, 4, 0, 2, 6, 1, 0, 3])    # two empty sets
labels = torch.randint(0, 3, (8,))

for step in range(4):
    loss = focal_loss(model(pts, n_pts), labels)
    optimizer.zero_grad()
    loss.backward()
    finite = all(torch.isfinite(p.grad).all() for p in model.parameters())
    optimizer.step()
    print(f"step {step}: loss={loss.item():.4f}  all grads finite: {finite}")
