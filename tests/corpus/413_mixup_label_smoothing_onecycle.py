"""Clean 413 - image classifier trained with Mixup, label-smoothed cross-entropy and a
OneCycleLR schedule stepped after every batch

What it does:
    Each batch is mixed with a shuffled copy of itself, lam ~ Beta(0.4, 0.4); the loss
    is lam * CE(out, y_a) + (1 - lam) * CE(out, y_b) with label_smoothing=0.1.
    OneCycleLR(max_lr=0.05, total_steps=epochs * batches) is stepped once per batch,
    right after optimizer.step().

Why it is correct (not a bug):
    OneCycleLR is a per-iteration schedule: total_steps equals the number of
    optimizer steps, so stepping it per batch is the documented usage (stepping it
    per epoch, or an epoch scheduler per batch, would be the bug).  The mixing
    coefficient is a Python float and the permuted targets are integer tensors; the
    gradient flows through the mixed inputs' forward only, as intended.  Both CE terms
    share one graph and one backward.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        epoch 0: loss=1.5999 lr=0.04996
        epoch 1: loss=1.4665 lr=0.03457
        epoch 2: loss=1.2464 lr=0.00834
        epoch 3: loss=1.4321 lr=0.00098
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)
EPOCHS, BATCH, N = 4, 16, 64

model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                      nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 5))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.05, total_steps=EPOCHS * (N // BATCH))
images = torch.randn(N, 3, 16, 16)
labels = torch.randint(0, 5, (N,))
images += labels.view(-1, 1, 1, 1) * 0.3  # make the classes separable


def mixup(x, y, alpha=0.4):
    lam = float(rng.beta(alpha, alpha))
    perm = torch.randperm(x.shape[0])
    return lam * x + (1 - lam) * x[perm], y, y[perm], lam


for epoch in range(EPOCHS):
    model.train()
    order = torch.randperm(N)
    for i in range(0, N, BATCH):
        idx = order[i:i + BATCH]
        x, y_a, y_b, lam = mixup(images[idx], labels[idx])
        out = model(x)
        loss = lam * F.cross_entropy(out, y_a, label_smoothing=0.1) + \
            (1 - lam) * F.cross_entropy(out, y_b, label_smoothing=0.1)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
    print(f"epoch {epoch}: loss={loss.item():.4f} lr={scheduler.get_last_lr()[0]:.5f}")
