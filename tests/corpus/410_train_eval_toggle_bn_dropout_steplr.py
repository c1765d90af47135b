"""Clean 410 - epoch loop that toggles model.train() / model.eval() around a validation
pass under torch.no_grad(), StepLR stepped once per epoch, best weights snapshotted

What it does:
    An MLP with BatchNorm1d and Dropout is trained for 6 epochs of 4 batches.  After
    each epoch: model.eval(), validation inside torch.no_grad() (loss accumulated with
    .item()), scheduler.step() once, and a deep copy of state_dict() kept when the
    validation loss improves.  model.train() is called at the start of every epoch;
    at the end the best weights are loaded back.

Why it is correct (not a bug):
    eval() switches BatchNorm to its running statistics and disables Dropout, and it
    is always undone by train() before the next training batch; no_grad keeps the
    validation forward from building graphs.  The scheduler is an epoch scheduler
    (StepLR(step_size=2)) and is stepped once per epoch after the optimizer steps,
    so the lr halves every 2 epochs as intended.  copy.deepcopy of the state_dict is
    needed because state_dict() tensors alias the live parameters.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        epoch 0: lr=0.100 train=0.9351 val=1.0267 acc=0.34
        epoch 1: lr=0.100 train=0.5567 val=0.7495 acc=0.75
        epoch 2: lr=0.050 train=0.4764 val=0.6042 acc=0.78
        epoch 3: lr=0.050 train=0.4257 val=0.5168 acc=0.80
        epoch 4: lr=0.025 train=0.3359 val=0.4977 acc=0.80
        epoch 5: lr=0.025 train=0.3215 val=0.5122 acc=0.78
        restored best weights (val loss 0.4977)
"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(12, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(0.3),
                      nn.Linear(64, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(0.3),
                      nn.Linear(64, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)

w = torch.randn(12, 3)
x_train, x_val = torch.randn(128, 12), torch.randn(64, 12)
y_train, y_val = (x_train @ w).argmax(1), (x_val @ w).argmax(1)
best_loss, best_state = float("inf"), None

for epoch in range(6):
    model.train()
    for i in range(0, 128, 32):
        loss = F.cross_entropy(model(x_train[i:i + 32]), y_train[i:i + 32])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    model.eval()
    val_loss, correct = 0.0, 0
    with torch.no_grad():
        for i in range(0, 64, 32):
            out = model(x_val[i:i + 32])
            val_loss += F.cross_entropy(out, y_val[i:i + 32], reduction="sum").item()
            correct += (out.argmax(1) == y_val[i:i + 32]).sum().item()
    val_loss /= 64
    lr = optimizer.param_groups[0]["lr"]
    scheduler.step()
    if val_loss < best_loss:
        best_loss, best_state = val_loss, copy.deepcopy(model.state_dict())
    print(f"epoch {epoch}: lr={lr:.3f} train={loss.item():.4f} val={val_loss:.4f} acc={correct / 64:.2f}")

model.load_state_dict(best_state)
print(f"restored best weights (val loss {best_loss:.4f})")
