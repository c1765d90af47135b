"""MoCo-style contrastive training: a momentum key encoder updated in place under no_grad
and a queue of keys refreshed in place (correct)."""

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
query_enc = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
key_enc = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
key_enc.load_state_dict(query_enc.state_dict())
for p in key_enc.parameters():
    p.requires_grad_(False)
queue = F.normalize(torch.randn(64, 8), dim=1)
ptr = 0
opt = torch.optim.SGD(query_enc.parameters(), lr=0.05, momentum=0.9)
for step in range(6):
    x = torch.randn(8, 16)
    q = F.normalize(query_enc(x + 0.1 * torch.randn_like(x)), dim=1)
    with torch.no_grad():
        for pq, pk in zip(query_enc.parameters(), key_enc.parameters()):
            pk.mul_(0.99).add_(pq.detach(), alpha=0.01)
        k = F.normalize(key_enc(x + 0.1 * torch.randn_like(x)), dim=1)
    pos = (q * k).sum(dim=1, keepdim=True)
    neg = q @ queue.t()
    logits = torch.cat([pos, neg], dim=1) / 0.07
    loss = F.cross_entropy(logits, torch.zeros(8, dtype=torch.long))
    opt.zero_grad()
    loss.backward()
    opt.step()
    queue[ptr : ptr + 8] = k
    ptr = (ptr + 8) % 64
print(float(loss))
