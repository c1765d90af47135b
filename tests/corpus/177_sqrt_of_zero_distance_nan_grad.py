"""Case 177 - Euclidean distances of a point to itself: sqrt(0) gives an infinite
gradient, times 0 gives NaN.

Source: a frequent discuss.pytorch.org report (paraphrased): "NaN gradients from
torch.sqrt in a pairwise distance".
Root cause: the pairwise squared distances include the diagonal (exactly 0); the sqrt's
backward divides by 0 there. Add an epsilon inside the sqrt or mask the diagonal.
"""
import torch
from torch import nn

torch.manual_seed(0)
embed = nn.Linear(3, 4)
points = torch.randn(5, 3)
z = embed(points)
sq = (z.unsqueeze(0) - z.unsqueeze(1)).pow(2).sum(-1)
dist = torch.sqrt(sq)  # <- CAUSE
loss = torch.relu(1.0 - dist).mean()
loss.backward()
print(embed.weight.grad)  # <- NAN
