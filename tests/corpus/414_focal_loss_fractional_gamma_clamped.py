"""Clean 414 - multi-class focal loss with a fractional gamma, pt clamped away from 1,
on a batch containing samples the model already classifies with probability 1.0

What it does:
    FL = -alpha * (1 - pt)**gamma * log(pt) with gamma = 0.5 and log(pt) taken from
    log_softmax.  pt = exp(log pt) is clamped to [0, 1 - 1e-6] before (1 - pt)**gamma.
    Some training samples carry huge logits (pt == 1.0 exactly in float32).

Why it is correct (not a bug):
    For gamma < 1, d/dpt (1 - pt)**gamma = -gamma (1 - pt)**(gamma - 1) is infinite
    at pt == 1, which would give inf * 0 = NaN in backward.  The clamp keeps the base
    at >= 1e-6, and for the clamped elements ClampBackward0 passes a zero gradient, so
    the saturated samples simply contribute nothing through the modulating factor;
    log(pt) comes from log_softmax and is finite.  Gradients are checked to be finite.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        step 0: focal=0.3925 samples with pt==1: 4 grads finite=True
        step 1: focal=0.3880 samples with pt==1: 4 grads finite=True
        step 2: focal=0.3835 samples with pt==1: 4 grads finite=True
        step 3: focal=0.3792 samples with pt==1: 4 grads finite=True
        step 4: focal=0.3749 samples with pt==1: 4 grads finite=True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FocalLoss(nn.Module):
    def __init__(self, gamma=0.5, alpha=0.25, eps=1e-6):
        super().__init__()
        self.gamma, self.alpha, self.eps = gamma, alpha, eps

    def forward(self, logits, target):
        log_pt = F.log_softmax(logits, dim=-1).gather(1, target[:, None]).squeeze(1)
        pt = log_pt.exp().clamp(max=1.0 - self.eps)
        return (-self.alpha * (1.0 - pt).pow(self.gamma) * log_pt).mean()


model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
criterion = FocalLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(32, 10)
y = torch.randint(0, 4, (32,))
x[:, 0], y[:4] = 0.0, 0
x[:4, 0] = 30.0  # feature 0 marks easy samples of class 0
with torch.no_grad():  # a "pretrained" unit that detects them with a huge margin
    model[0].weight[:, 0] = 0.0
    model[0].weight[0, 0] = 1.0
    model[2].weight[:, 0] = torch.tensor([5.0, -5.0, -5.0, -5.0])

for step in range(5):
    logits = model(x)
    saturated = (F.softmax(logits, dim=-1).gather(1, y[:, None]) == 1.0).sum().item()
    loss = criterion(logits, y)
    optimizer.zero_grad()
    loss.backward()
    finite = all(torch.isfinite(p.grad).all() for p in model.parameters())
    optimizer.step()
    print(f"step {step}: focal={loss.item():.4f} samples with pt==1: {saturated} grads finite={finite}")
