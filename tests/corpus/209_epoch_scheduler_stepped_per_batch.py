"""Case 209 - per-epoch StepLR stepped inside the batch loop: the learning rate collapses
to ~0 within the first epoch and the model stops training

Source: https://github.com/pytorch/pytorch/issues/3814 "Scheduler.step() doesn't
        perform optimizer.step()" (apaszke: "Scheduler should step after the end of
        each epoch, not after every iteration"); per-step vs per-epoch confusion also in
        https://github.com/pytorch/vision/issues/8629.
Category: scheduler-misuse (silent: parameters effectively frozen)

Reported symptom:
    No error.  The loss decreases for a few batches, then stays flat for all later
    epochs; the weights stop changing.

Root cause:
    StepLR(step_size=1, gamma=0.5) is written for "halve the LR every epoch", but
    scheduler.step() is called once per batch.  With 25 batches per epoch the LR is
    0.1 * 0.5**25 = 3e-9 after the first epoch and ~1e-17 after the second, so every
    later optimizer.step() is a no-op in float32.

Ground truth a good tool should report:
    optimizer.param_groups[0]['lr'] decays by gamma at every iteration because
    `scheduler.step()` is inside the batch loop; from epoch 1 on the parameter
    updates are ~0 (||delta W|| / ||W|| < 1e-9).  Fix: call scheduler.step() once
    per epoch (dedent it out of the batch loop).
    EXPECT: kind=lr_collapsed; cause_line=62

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        epoch 0: lr at end=2.98e-09  mean loss=0.5150  relative weight change=6.1e-02
        epoch 1: lr at end=8.88e-17  mean loss=0.4987  relative weight change=6.2e-09
        epoch 2: lr at end=2.65e-24  mean loss=0.4987  relative weight change=0.0e+00
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)  # halve every epoch

X = torch.randn(400, 10)
y = (X[:, :3].sum(dim=1, keepdim=True) + 0.1 * torch.randn(400, 1)).tanh()
loader = DataLoader(TensorDataset(X, y), batch_size=16, shuffle=True)


def weight_vector():
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


for epoch in range(3):
    start = weight_vector()
    total = 0.0
    for xb, yb in loader:
        loss = F.mse_loss(model(xb), yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()  # <- CAUSE: per-epoch schedule stepped every batch
        total += loss.item()
    rel = (weight_vector() - start).norm() / start.norm()
    print(f"epoch {epoch}: lr at end={optimizer.param_groups[0]['lr']:.2e}"
          f"  mean loss={total / len(loader):.4f}  relative weight change={rel:.1e}")
