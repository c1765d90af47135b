"""Correct 309 - sensor data with NaN gaps: nan_to_num imputation + indexing the labelled entries

Category: correct (numerics: NaN in the data, handled deliberately)
What it is:
    Inputs and labels contain NaN for dropped packets.  The inputs are imputed with
    torch.nan_to_num(nan=0.0) and a missingness-indicator channel is appended; the label
    NaNs are replaced by placeholders and the loss only keeps the labelled entries by
    boolean indexing, dividing by the label count clamped to at least 1.
Why a naive tool might flag it:
    The raw tensors hold NaN and the subtraction pred - clean_labels touches placeholder
    entries; indexing selects only the observed ones, so the loss and gradients are finite
    (contrast: torch.nanmean on the raw difference gives NaN gradients).
Ground truth a good tool should report:
    EXPECT: no findings (correct training code: deliberate nan_to_num and masked loss)

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        step 0: loss 1.0131 over 17 labels
        step 1: loss 0.8172 over 17 labels
        step 2: loss 0.6594 over 17 labels
        step 3: loss 0.5332 over 17 labels
        step 4: loss 0.4441 over 17 labels
        grads finite: True
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
nan = float("nan")

# hourly sensor readings; dropped packets arrive as NaN, in the inputs and in the labels
readings = torch.randn(10, 6)
readings[torch.rand(10, 6) < 0.15] = nan
labels = torch.randn(10, 2)
labels[torch.rand(10, 2) < 0.2] = nan

observed = ~torch.isnan(readings)
inputs = torch.cat([torch.nan_to_num(readings, nan=0.0), observed.float()], dim=1)  # impute + missingness flags
label_ok = ~torch.isnan(labels)
clean_labels = torch.nan_to_num(labels, nan=0.0)  # placeholders, never compared below

model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 2))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(5):
    pred = model(inputs)
    err = (pred - clean_labels)[label_ok]  # only the labelled entries enter the loss
    loss = err.pow(2).sum() / label_ok.sum().clamp(min=1)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step}: loss {loss.item():.4f} over {int(label_ok.sum())} labels")
print("grads finite:", all(torch.isfinite(p.grad).all().item() for p in model.parameters()))
