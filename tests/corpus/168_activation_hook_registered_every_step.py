"""Case 168 - forward hook registered inside the training step: hooks pile up, the penalty grows

Source: https://github.com/shinkyo0513/Towards-Visually-Explaining-Video-Understanding-Networks-With-Perturbation/issues/10
        "Problems about grad_cam ... when running grad_cam multiple times: the
        backward_hook and forward_hook will be registered multiple times";
        same fix (keep the handle, remove it) in
        https://github.com/microsoft/tensorwatch/pull/74
Category: hooks (registered repeatedly, never removed)

Reported symptom:
    No error.  Training slows down over time and behaves as if a
    hyper-parameter drifted: here the activation-sparsity penalty grows
    linearly with the step count until it dominates the task loss.

Root cause:
    `register_forward_hook` adds a new hook every time it is called and keeps
    every earlier one (it returns a handle that must be removed).  The hook is
    registered at the top of `train_step`, so at step k the hidden layer has k
    hooks, each appending the same activation to `captured`; the L1 penalty
    summed over `captured` is k times the intended one (and k copies of the
    activation are kept alive until the list is cleared).

Ground truth a good tool should report:
    `model.hidden` accumulates one forward hook per call of `train_step`
    (registered at line 66, never removed: 40 hooks after 40 steps); each
    forward runs all of them and the penalty at line 69 counts the activation
    40 times.  Register once, or remove the handle after the step.
    EXPECT: kind=hook_accumulation; module=hidden; cause_line=66

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        step  1: hooks on model.hidden =  1, activations captured per forward =  1,
          penalty / intended = 1.0
        step 10: hooks on model.hidden = 10, activations captured per forward = 10,
          penalty / intended = 10.0
        step 40: hooks on model.hidden = 40, activations captured per forward = 40,
          penalty / intended = 40.0
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SparseAutoencoder(nn.Module):
    def __init__(self, n=12, code=24):
        super().__init__()
        self.hidden = nn.Sequential(nn.Linear(n, code), nn.ReLU())
        self.decode = nn.Linear(code, n)

    def forward(self, x):
        return self.decode(self.hidden(x))


model = SparseAutoencoder()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
data = torch.randn(128, 12)
sparsity_weight = 1e-3
captured = []


def train_step(batch):
    captured.clear()
    model.hidden.register_forward_hook(lambda mod, inp, out: captured.append(out))  # <- CAUSE: a new hook on every call
    recon = model(batch)
    rec_loss = F.mse_loss(recon, batch)
    penalty = sparsity_weight * sum(a.abs().mean() for a in captured)  # <- READ: one term per live hook
    loss = rec_loss + penalty
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    intended = sparsity_weight * captured[0].abs().mean()
    return rec_loss.item(), (penalty / intended).item(), len(captured)


for step in range(1, 41):
    rec, ratio, n_captured = train_step(data[(step % 4) * 32:(step % 4 + 1) * 32])
    if step in (1, 10, 40):
        print(f"step {step:2d}: hooks on model.hidden = {len(model.hidden._forward_hooks):2d}, "
              f"activations captured per forward = {n_captured:2d}, "
              f"penalty / intended = {ratio:.1f}")
