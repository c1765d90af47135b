"""Case 638 - class-weighted per-sample loss never reduced to a scalar

Source: pytorch/pytorch test/test_autograd.py, test_gradient_edge_output / test_backward_no_grad (assertRaisesRegex "grad can be implicitly created only for scalar output")
Category: backward-arguments

Reported symptom:
    RuntimeError: grad can be implicitly created only for scalar outputs

Root cause:
    The criterion uses reduction="none" so every sample can be re-weighted, but the
    weighted loss vector is never averaged. loss.backward() without a gradient
    argument is only defined for a scalar (one-element) output.

Ground truth a good tool should report:
    The weighting line `loss = per_sample * sample_w` should reduce, e.g.
    `(per_sample * sample_w).mean()`; raised at loss.backward().
"""
import torch
from torch import nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3))
criterion = nn.CrossEntropyLoss(reduction="none")
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
class_w = torch.tensor([1.0, 3.0, 0.5])

x, y = torch.randn(24, 8), torch.randint(0, 3, (24,))
for step in range(3):
    per_sample = criterion(model(x), y)
    sample_w = class_w[y]
    loss = per_sample * sample_w  # <- CAUSE: never reduced
    opt.zero_grad()
    loss.backward()  # <- ERROR
    opt.step()
    print(f"step {step} loss {loss.mean().item():.3f}")
