"""Correct 349 - two optimizers over disjoint parameter groups, one backward, staggered steps

Source: the "different optimizer per sub-module" pattern (e.g. sparse embeddings with
        SparseAdam + dense layers with AdamW, https://pytorch.org/docs/stable/generated/torch.optim.SparseAdam.html;
        discussed in https://discuss.pytorch.org/t/best-practice-for-freezing-layers/58156)
Category: correct script (optimizer bookkeeping)

What it does:
    A recommender: sparse user/item embeddings trained by SparseAdam, a dense MLP
    scorer trained by AdamW.  One backward per batch fills both groups; the dense
    optimizer steps and zeroes its own gradients *before* the sparse optimizer
    steps -- legal, because `dense_opt.zero_grad()` only touches the MLP's
    parameters, which no one reads afterwards, while the embeddings' gradients are
    still intact for `sparse_opt.step()`.  The groups are checked to be disjoint.

Ground truth a good tool should report:
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        parameter groups disjoint: True (2 sparse, 4 dense)
        epoch 0: loss 0.6887
        epoch 3: loss 0.2244
        item embeddings moved: True | MLP moved: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N_USERS, N_ITEMS, DIM = 20, 30, 8


class Recommender(nn.Module):
    def __init__(self):
        super().__init__()
        self.users = nn.Embedding(N_USERS, DIM, sparse=True)
        self.items = nn.Embedding(N_ITEMS, DIM, sparse=True)
        self.scorer = nn.Sequential(nn.Linear(2 * DIM, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, u, i):
        return self.scorer(torch.cat([self.users(u), self.items(i)], dim=1)).squeeze(1)


model = Recommender()
sparse_params = list(model.users.parameters()) + list(model.items.parameters())
dense_params = list(model.scorer.parameters())
sparse_opt = torch.optim.SparseAdam(sparse_params, lr=0.05)
dense_opt = torch.optim.AdamW(dense_params, lr=0.01)
ids = {id(p) for p in sparse_params}
print(f"parameter groups disjoint: {ids.isdisjoint(id(p) for p in dense_params)} "
      f"({len(sparse_params)} sparse, {len(dense_params)} dense)")

users = torch.randint(0, N_USERS, (96,))
items = torch.randint(0, N_ITEMS, (96,))
ratings = ((users % 5).float() - (items % 3).float()) / 2
items_before = model.items.weight.detach().clone()
mlp_before = model.scorer[0].weight.detach().clone()

for epoch in range(4):
    total = 0.0
    for start in range(0, 96, 32):
        u, i, r = users[start:start + 32], items[start:start + 32], ratings[start:start + 32]
        loss = F.mse_loss(model(u, i), r)
        loss.backward()
        dense_opt.step()
        dense_opt.zero_grad()
        sparse_opt.step()
        sparse_opt.zero_grad()
        total += loss.item()
    if epoch in (0, 3):
        print(f"epoch {epoch}: loss {total / 3:.4f}")

print(f"item embeddings moved: {not torch.equal(items_before, model.items.weight)} | "
      f"MLP moved: {not torch.equal(mlp_before, model.scorer[0].weight)}")
