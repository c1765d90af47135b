"""Correct 350 - per-batch LR schedule: linear warmup then cosine, stepped after optimizer.step()

Source: "How to adjust learning rate" in https://pytorch.org/docs/stable/optim.html
        (scheduler.step() after optimizer.step(); ordering discussed in
        https://github.com/pytorch/pytorch/issues/3814 and
        https://github.com/Lornatang/SRGAN-PyTorch/issues/1)
Category: correct script (optimizer + scheduler protocol)

What it does:
    A small MLP with BatchNorm and Dropout.  SequentialLR chains LinearLR warmup and
    CosineAnnealingLR; the scheduler steps once per batch, always right after
    optimizer.step(); nothing touches .grad between backward() and step().
    Per-epoch evaluation runs under torch.no_grad() in eval mode and the model is
    put back in train mode at the start of the next epoch.

Ground truth a good tool should report:
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        epoch 0: lr 0.0500 -> 0.0985 | train loss 1.0555 | eval loss 0.9344
        epoch 1: lr 0.0985 -> 0.0677 | train loss 0.7534 | eval loss 0.7594
        epoch 2: lr 0.0677 -> 0.0216 | train loss 0.5791 | eval loss 0.6460
        epoch 3: lr 0.0216 -> 0.0000 | train loss 0.5071 | eval loss 0.6234
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(6, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
steps_per_epoch, epochs, warmup = 4, 4, 3
warm = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.5, total_iters=warmup)
cosine = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps_per_epoch * epochs - warmup)
scheduler = torch.optim.lr_scheduler.SequentialLR(optimizer, [warm, cosine], milestones=[warmup])

x = torch.randn(128, 6)
y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
x_val, y_val = x[96:], y[96:]

for epoch in range(epochs):
    model.train()
    lr_start, total = optimizer.param_groups[0]["lr"], 0.0
    for b in range(steps_per_epoch):
        xb, yb = x[b * 24:(b + 1) * 24], y[b * 24:(b + 1) * 24]
        optimizer.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
        scheduler.step()
        total += loss.item()

    model.eval()
    with torch.no_grad():
        val = F.cross_entropy(model(x_val), y_val).item()
    print(f"epoch {epoch}: lr {lr_start:.4f} -> {optimizer.param_groups[0]['lr']:.4f} | "
          f"train loss {total / steps_per_epoch:.4f} | eval loss {val:.4f}")
