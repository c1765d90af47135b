"""Case 947 - boundary loss weighted by distance maps computed in NumPy (correct)

Source: https://github.com/JunMa11/SegLossOdyssey/issues/17
        "We only use `torch.no_grad()` when something should not be used during BP"
Category: correct (invariant 8)
EXPECT: no findings

Reported symptom:
    None. A Hausdorff-style loss computes distance maps of the prediction and of
    the target with a NumPy routine under torch.no_grad(), and weights the
    squared error of the prediction by them.

Root cause:
    None. The distance maps are weights, computed from a detached NumPy copy on
    purpose; the error term (pred - target) ** 2 keeps its graph, so the
    segmentation network is trained through it. The Dice score is logged with
    .item().

Ground truth a good tool should report:
    Nothing.
"""
import torch
import torch.nn as nn

from losses.boundary import HausdorffDTLoss, dice_score

torch.manual_seed(0)

net = nn.Sequential(
    nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 3, padding=1), nn.Sigmoid()
)
criterion = HausdorffDTLoss()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)

images = torch.rand(32, 1, 16, 16)
masks = (images > 0.6).float()

scores = []
for epoch in range(15):
    idx = torch.randint(0, 32, (8,))
    pred = net(images[idx])
    loss = criterion(pred, masks[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scores.append(dice_score(pred, masks[idx]).item())

print(f"final loss {loss.item():.4f}, dice {scores[-1]:.3f}")
