"""Case 964 - backbone frozen and filtered out of the optimizer, model moved first (correct)

Source: https://github.com/google-research/adapter-bert/issues/2
        (only the adapters, layer norms and head are given to the optimizer; the rest of
        the network stays fixed on purpose)
Category: correct (invariant 2)
EXPECT: no findings

Reported symptom:
    None. The model is moved with .to(device) before the optimizer is built; the
    backbone is frozen with requires_grad_(False) and the optimizer is given only the
    parameters that still require grad.

Root cause:
    None. Parameters left out of the optimizer on purpose get no gradient (they are
    frozen), and the optimizer holds the tensors the model computes with.

Ground truth a good tool should report:
    Nothing.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class Net(nn.Module):
    def __init__(self, d_in=16, dim=32, n_classes=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(d_in, dim), nn.ReLU(), nn.Linear(dim, dim), nn.ReLU())
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, n_classes)

    def forward(self, x):
        return self.head(self.norm(self.backbone(x)))


x = torch.randn(400, 16)
y = (x[:, 0] > 0).long() + (x[:, 1] > 1).long()

model = Net().to(device)
model.backbone.requires_grad_(False)
optimizer = torch.optim.AdamW(filter(lambda p: p.requires_grad, model.parameters()), lr=1e-2)

for step in range(20):
    idx = torch.randint(0, 400, (64,))
    loss = F.cross_entropy(model(x[idx].to(device)), y[idx].to(device))
    if step == 0:
        first = loss.item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"loss {first:.4f} -> {loss.item():.4f}")
