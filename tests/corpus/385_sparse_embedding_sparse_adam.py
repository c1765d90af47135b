"""A recommender with sparse embeddings (sparse=True) trained by SparseAdam, the dense
layers by Adam (correct)."""

import torch
from torch import nn

torch.manual_seed(0)
users = nn.Embedding(100, 16, sparse=True)
items = nn.Embedding(200, 16, sparse=True)
mlp = nn.Sequential(nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 1))
sparse_opt = torch.optim.SparseAdam([*users.parameters(), *items.parameters()], lr=1e-2)
dense_opt = torch.optim.Adam(mlp.parameters(), lr=1e-3)
for step in range(5):
    u, i = torch.randint(0, 100, (32,)), torch.randint(0, 200, (32,))
    rating = torch.rand(32, 1) * 5
    pred = mlp(torch.cat([users(u), items(i)], dim=1))
    loss = nn.functional.mse_loss(pred, rating)
    sparse_opt.zero_grad()
    dense_opt.zero_grad()
    loss.backward()
    sparse_opt.step()
    dense_opt.step()
print(float(loss))
