"""Case 943 - batch-hard triplet loss: mining in NumPy, the loss in torch (correct)

Source: https://github.com/roman-vygon/triplet_loss_kws/issues/6
        "Please see if uncommenting this line helps"
Category: correct (invariant 8)
EXPECT: no findings

Reported symptom:
    None. The hardest positive and negative of each anchor are picked from a
    NumPy copy of the pairwise distances; the margin loss is then computed on the
    torch distances at those indices.

Root cause:
    None. The NumPy round trip only chooses indices. The values that enter the
    loss are indexed from the differentiable distance matrix, so the embedding
    network gets its gradient. Monitoring uses .item() and .tolist().

Ground truth a good tool should report:
    Nothing.
"""
import torch

from losses.triplet import BatchHardTripletLoss
from model import Embedder

torch.manual_seed(0)

centers = torch.randn(5, 20) * 1.5
labels = torch.randint(0, 5, (400,))
feats = centers[labels] + torch.randn(400, 20)

model = Embedder()
criterion = BatchHardTripletLoss(margin=1.0)
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)

log = []
for step in range(30):
    idx = torch.randint(0, 400, (64,))
    loss, active = criterion(model(feats[idx]), labels[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    log.append([loss.item(), active])

print(f"final loss {log[-1][0]:.4f}, active triplets {log[-1][1]}")
