"""Case 903 - margin head with its own weight given to the optimizer as a second group (correct)

Source: https://github.com/ronghuaiyang/arcface-pytorch/issues/20
        "the optimizer need to know which parameters shoud be update"
Category: correct (invariant 2)
EXPECT: no findings

Reported symptom:
    None. ArcFace-style training: a backbone producing embeddings and a separate
    metric head (ArcMarginProduct) whose class-centre weight is an nn.Parameter
    outside the backbone module.

Root cause:
    None. Both modules are passed to one optimizer as two param groups, so every
    gradient backward produces (backbone and metric head) is consumed by a step.

Ground truth a good tool should report:
    Nothing.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ArcMarginProduct(nn.Module):
    def __init__(self, in_features, out_features, s=8.0, m=0.3):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) * 0.1)
        self.s, self.cos_m, self.sin_m = s, math.cos(m), math.sin(m)

    def forward(self, emb, label):
        cosine = F.linear(F.normalize(emb), F.normalize(self.weight)).clamp(-1 + 1e-6, 1 - 1e-6)
        sine = torch.sqrt(1.0 - cosine ** 2)
        phi = cosine * self.cos_m - sine * self.sin_m
        one_hot = F.one_hot(label, cosine.shape[1]).float()
        return self.s * (one_hot * phi + (1.0 - one_hot) * cosine)


model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 16))
metric_fc = ArcMarginProduct(16, 5)
optimizer = torch.optim.Adam(
    [{"params": model.parameters()}, {"params": metric_fc.parameters(), "lr": 2e-2}], lr=5e-3
)

centers = torch.randn(5, 20) * 2
labels = torch.randint(0, 5, (500,))
x = centers[labels] + torch.randn(500, 20)

for step in range(30):
    idx = torch.randint(0, 500, (64,))
    loss = F.cross_entropy(metric_fc(model(x[idx]), labels[idx]), labels[idx])
    if step == 0:
        first = loss.item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"loss {first:.4f} -> {loss.item():.4f}")
