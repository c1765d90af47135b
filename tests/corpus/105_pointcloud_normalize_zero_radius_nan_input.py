"""Case 105 - no_grad point-cloud normalisation divides by a zero radius -> NaN input, NaN loss

Source: https://github.com/fxia22/pointnet.pytorch/issues/58
        "Getting NAN after few iterations" ("There were NAN's in the input to the network.
        These NaN's were generated after the Zero Mean and Normalization step for one model
        only.")
Category: nan-in-forward

Reported symptom:
    PointNet classification loss is nan from the first step; lowering the learning rate or
    the batch size changes nothing.

Root cause:
    Each cloud is centred and divided by its largest point radius in a torch.no_grad()
    preprocessing step.  One mesh's surface sampling failed and produced 32 identical
    points (all at the origin): after centring every point is 0, the radius is 0 and the
    division gives 0 / 0 = NaN for the whole cloud.  The NaN is born outside the model and
    outside autograd (no_grad, no grad_fn), then poisons the max-pooled features, the loss
    and every gradient.

Ground truth a good tool should report:
    First non-finite value: NaN produced by the division at line 48 (inside no_grad,
    radius == 0) for the cloud created at line 52; it is fed to the model as input
    `clouds` and makes the loss and all grads NaN.  Fix: guard the radius
    (radius.clamp(min=eps)) or drop degenerate clouds.
    EXPECT: kind=nan_input; first_nan_line=48; nan_op=div; cause_line=48;
            created_line=52; affected=mlp.0.weight.grad

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        epoch 0: loss nan, mlp.0.weight NaN: True
        epoch 1: loss nan, mlp.0.weight NaN: True
        input clouds contain NaN: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def normalize_cloud(points):
    """Center the cloud and scale it into the unit sphere (done once, as preprocessing)."""
    with torch.no_grad():
        points = points - points.mean(dim=0, keepdim=True)
        radius = points.norm(dim=1).max()
        return points / radius  # <- CAUSE,NAN: radius == 0 for a collapsed cloud -> 0 / 0


raw_clouds = [torch.randn(32, 3) * s for s in (1.0, 2.5, 0.7)]
raw_clouds.append(torch.zeros(32, 3))  # <- CREATED: a mesh whose surface sampling failed: all 32 points at the origin
labels = torch.tensor([0, 1, 2, 1])
clouds = torch.stack([normalize_cloud(c) for c in raw_clouds])


class TinyPointNet(nn.Module):
    def __init__(self, n_classes=3):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 64), nn.ReLU())
        self.head = nn.Linear(64, n_classes)

    def forward(self, pts):
        return self.head(self.mlp(pts).max(dim=1).values)


net = TinyPointNet()
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for epoch in range(2):
    loss = F.cross_entropy(net(clouds), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"epoch {epoch}: loss {loss.item()}, mlp.0.weight NaN: {torch.isnan(net.mlp[0].weight).any().item()}")
print("input clouds contain NaN:", torch.isnan(clouds).any().item())
