"""Case 916 - self-supervised encoder with an online linear probe on detached features (correct)

Source: https://github.com/vturrisi/solo-learn/issues/135
        "`.detach()` is not done in-place, so only for `self.classifier()` the features are detached."
Category: correct (invariant 8)
EXPECT: no findings

Reported symptom:
    None. An encoder is trained with a contrastive loss between two augmented
    views while a linear classifier is trained online on detached features.

Root cause:
    None. feats.detach() only cuts the classifier's loss from the encoder, which
    is intended: the encoder gets its gradient from the contrastive loss, the
    classifier from the cross-entropy, and a single optimizer steps both.

Ground truth a good tool should report:
    Nothing. Every optimised parameter receives a gradient from one of the two
    losses.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

encoder = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 32))
projector = nn.Linear(32, 16)
classifier = nn.Linear(32, 4)
params = list(encoder.parameters()) + list(projector.parameters()) + list(classifier.parameters())
optimizer = torch.optim.Adam(params, lr=3e-3)

centers = torch.randn(4, 16) * 2
labels = torch.randint(0, 4, (512,))
x = centers[labels] + torch.randn(512, 16)


def info_nce(z1, z2, t=0.2):
    z1, z2 = F.normalize(z1, dim=1), F.normalize(z2, dim=1)
    logits = z1 @ z2.t() / t
    return F.cross_entropy(logits, torch.arange(z1.shape[0]))


for step in range(30):
    idx = torch.randint(0, 512, (64,))
    v1 = x[idx] + 0.3 * torch.randn(64, 16)
    v2 = x[idx] + 0.3 * torch.randn(64, 16)
    feats1, feats2 = encoder(v1), encoder(v2)
    ssl_loss = info_nce(projector(feats1), projector(feats2))
    probe_loss = F.cross_entropy(classifier(feats1.detach()), labels[idx])
    loss = ssl_loss + probe_loss
    if step == 0:
        first = (ssl_loss.item(), probe_loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"ssl {first[0]:.4f} -> {ssl_loss.item():.4f}  probe {first[1]:.4f} -> {probe_loss.item():.4f}")
