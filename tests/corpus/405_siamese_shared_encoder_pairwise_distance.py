"""Clean 405 - Siamese network: one encoder applied to both members of a pair,
contrastive loss on F.pairwise_distance, including pairs of identical images

What it does:
    The same `SiameseNet.encoder` module embeds x1 and x2 (two forward calls, one set
    of weights).  The contrastive loss pulls positive pairs together and pushes
    negative pairs beyond a margin.  The batch deliberately contains pairs whose two
    members are the very same image (distance exactly 0 before the eps).

Why it is correct (not a bug):
    Calling one module twice before a single backward is legal: each call saves its
    own activations and the weight gradients from both branches are summed into the
    same .grad, which is what weight sharing means.  F.pairwise_distance computes
    ||x1 - x2 + eps||, so the sqrt never sees an exact 0 and the gradient at
    identical embeddings is finite (unlike a hand-written sqrt of the squared
    distance, cases-2/26).  Gradients are checked to be finite.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        step 0: loss=0.2026 grads finite=True
        step 1: loss=0.2009 grads finite=True
        step 2: loss=0.2547 grads finite=True
        step 3: loss=0.2857 grads finite=True
        step 4: loss=0.2542 grads finite=True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SiameseNet(nn.Module):
    def __init__(self, emb_dim=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                     nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
                                     nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, emb_dim))

    def forward(self, x1, x2):
        return self.encoder(x1), self.encoder(x2)


def contrastive_loss(e1, e2, same, margin=1.0):
    dist = F.pairwise_distance(e1, e2)
    pos = same * dist.pow(2)
    neg = (1 - same) * F.relu(margin - dist).pow(2)
    return 0.5 * (pos + neg).mean()


net = SiameseNet()
optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
images = torch.randn(12, 1, 12, 12)
for step in range(5):
    i1, i2 = torch.randint(0, 12, (16,)), torch.randint(0, 12, (16,))
    i2[:4] = i1[:4]  # identical pairs
    same = (i1 % 3 == i2 % 3).float()  # 3 "identities"
    e1, e2 = net(images[i1], images[i2])
    loss = contrastive_loss(e1, e2, same)
    optimizer.zero_grad()
    loss.backward()
    finite = all(torch.isfinite(p.grad).all() for p in net.parameters())
    optimizer.step()
    print(f"step {step}: loss={loss.item():.4f} grads finite={finite}")
