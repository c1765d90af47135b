"""Case 912 - shared siamese encoder, ModuleList by comprehension, ModuleDict heads (correct)

Source: https://github.com/yaoppeng/U-Net_v2/issues/10
        "The correct approach is to use a list comprehension to create separate `nn.Conv2d` instances"
Category: correct (invariant 6)
EXPECT: no findings

Reported symptom:
    None. A siamese network applies one encoder to both inputs; the encoder's
    blocks are independent instances; per-task heads live in an nn.ModuleDict.

Root cause:
    None. Using the same encoder on two inputs is intended weight sharing and it
    is registered once; the blocks are built with a list comprehension, so each
    has its own weights; the heads are registered through nn.ModuleDict.

Ground truth a good tool should report:
    Nothing.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self, d_in=10, dim=32, depth=2):
        super().__init__()
        self.inp = nn.Linear(d_in, dim)
        self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(dim, dim), nn.ReLU()) for _ in range(depth)])

    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            h = h + block(h)
        return h


class Siamese(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.heads = nn.ModuleDict({"same": nn.Linear(32, 1), "closer": nn.Linear(32, 1)})

    def forward(self, a, b, task):
        return self.heads[task]((self.encoder(a) - self.encoder(b)).abs()).squeeze(-1)


a, b = torch.randn(400, 10), torch.randn(400, 10)
b[:200] = a[:200] + 0.1 * torch.randn(200, 10)
same = torch.cat([torch.ones(200), torch.zeros(200)])
closer = (a.norm(dim=1) < b.norm(dim=1)).float()

model = Siamese()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)

for step in range(40):
    idx = torch.randint(0, 400, (64,))
    loss = (F.binary_cross_entropy_with_logits(model(a[idx], b[idx], "same"), same[idx])
            + F.binary_cross_entropy_with_logits(model(a[idx], b[idx], "closer"), closer[idx]))
    if step == 0:
        first = loss.item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"loss {first:.4f} -> {loss.item():.4f}")
