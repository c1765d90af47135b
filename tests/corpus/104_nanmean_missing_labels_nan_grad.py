"""Case 104 - missing labels stored as NaN, loss with torch.nanmean: finite loss, NaN gradients

Source: https://github.com/BLAST-AI-ML/synapse/pull/237
        "Make NN training robust to NaN" ("NaNs correspond to missing values in the dataset
        ... ignored in the loss function ... by using nanmean ... they can still propagate in
        the gradients"; see pytorch/pytorch#4132)
Category: nan-in-backward

Reported symptom:
    The first loss is finite (nanmean ignores the missing entries) but the gradients are
    NaN; after the first step every weight and every later loss is NaN.

Root cause:
    The target matrix marks unmeasured properties with NaN.  (pred - targets) ** 2 is NaN at
    those entries; nanmean skips them in forward and gives them a zero gradient, but
    PowBackward0 then computes 0 * 2 * (pred - target) = 0 * NaN = NaN, which flows into
    the prediction and every weight.  The NaN was born outside the model (the labels) and
    only "hidden" in forward.

Ground truth a good tool should report:
    Forward: NaN enters with `targets` (line 53); the difference/square at line 60
    is NaN at the missing entries; nanmean hides it in the loss.  Backward: the first NaN
    is produced by PowBackward0 (or SubBackward0) of line 60; it reaches model[0].weight.grad.
    Fix: select the observed entries before subtracting, e.g.
    mask = ~targets.isnan(); ((pred - targets)[mask] ** 2).mean().
    EXPECT: kind=nan_backward; nan_node=PowBackward0; nan_node_line=60; cause_line=60;
            created_line=53; affected=0.weight.grad

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        step 0: loss 0.9591, grad NaN: True, weights NaN: True
        step 1: loss nan, grad NaN: True, weights NaN: True
        step 2: loss nan, grad NaN: True, weights NaN: True
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
nan = float("nan")

# multi-task property regression: not every molecule was assayed for every property
fingerprints = torch.randn(8, 16)
targets = torch.tensor([
    [0.3, 1.2, nan],
    [0.1, nan, 2.0],
    [0.7, 0.9, 1.1],
    [nan, 1.5, 0.4],
    [0.2, 0.8, nan],
    [0.9, nan, 1.7],
    [0.4, 1.1, 0.6],
    [0.5, 0.3, 1.3],
])  # <- CREATED: missing labels stored as NaN

model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 3))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)

for step in range(3):
    pred = model(fingerprints)
    loss = torch.nanmean((pred - targets) ** 2)  # <- CAUSE,NAN: nanmean skips NaN in forward, but PowBackward gives 0 * nan = nan
    opt.zero_grad()
    loss.backward()
    grad_nan = torch.isnan(model[0].weight.grad).any().item()
    opt.step()
    print(f"step {step}: loss {loss.item():.4f}, grad NaN: {grad_nan}, "
          f"weights NaN: {torch.isnan(model[0].weight).any().item()}")
