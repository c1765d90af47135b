"""Case 942 - SimSiam with a stop-gradient on the target branch (correct)

Source: https://github.com/PatrickHua/SimSiam/issues/22
        "Stop grad is implemented using the detach operation"
Category: correct (invariant 8)
EXPECT: no findings

Reported symptom:
    None. Two augmented views go through one encoder and a predictor; each
    prediction is pulled towards the other view's projection, which is detached.

Root cause:
    None. The detach is the method's stop-gradient: the encoder still gets its
    gradient through the prediction branch, so every parameter the optimizer
    holds is trained. The loss and a collapse metric are logged with .item()
    and NumPy.

Ground truth a good tool should report:
    Nothing.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def neg_cosine(p, z):
    return -F.cosine_similarity(p, z.detach(), dim=-1).mean()


encoder = nn.Sequential(nn.Linear(20, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 32))
predictor = nn.Sequential(nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 32))
optimizer = torch.optim.SGD(
    list(encoder.parameters()) + list(predictor.parameters()), lr=0.05, momentum=0.9
)

data = torch.randn(512, 20)
history = []
for step in range(30):
    x = data[torch.randint(0, 512, (64,))]
    x1 = x + 0.1 * torch.randn_like(x)
    x2 = x * (1 + 0.1 * torch.randn_like(x))
    z1, z2 = encoder(x1), encoder(x2)
    p1, p2 = predictor(z1), predictor(z2)
    loss = 0.5 * neg_cosine(p1, z2) + 0.5 * neg_cosine(p2, z1)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    spread = F.normalize(z1, dim=1).detach().numpy().std(0).mean()
    history.append((loss.item(), float(spread)))

print(f"final loss {history[-1][0]:.4f}, output std {np.mean([s for _, s in history]):.4f}")
