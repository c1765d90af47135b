"""Case 706 - Adam used on a recommender whose embeddings produce sparse gradients

Source: pytorch/pytorch test/optim/test_optim.py (optimizers that do not support sparse gradients raise '... does not support sparse gradients')
Category: optimizer / sparse gradients

Reported symptom:
    RuntimeError: Adam does not support sparse gradients, please consider SparseAdam instead

Root cause:
    The user/item embedding tables are created with sparse=True to save
    memory, so their .grad are sparse COO tensors. torch.optim.Adam only
    handles dense gradients and raises on the first step.

Ground truth a good tool should report:
    Either the `sparse=True` embeddings (CAUSE) or the choice of Adam for them
    (CAUSE) — use dense embeddings or SparseAdam for the embedding tables.
    Raised at opt.step() (ERROR).
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class MatrixFactorization(nn.Module):
    def __init__(self, n_users, n_items, dim=8):
        super().__init__()
        self.users = nn.Embedding(n_users, dim, sparse=True)  # <- CAUSE
        self.items = nn.Embedding(n_items, dim, sparse=True)

    def forward(self, u, i):
        return (self.users(u) * self.items(i)).sum(-1)


model = MatrixFactorization(100, 50)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)  # <- CAUSE
u = torch.randint(0, 100, (64,))
i = torch.randint(0, 50, (64,))
r = torch.rand(64) * 5
for step in range(3):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(u, i), r)
    loss.backward()
    opt.step()  # <- ERROR
    print("step", step, loss.item())
