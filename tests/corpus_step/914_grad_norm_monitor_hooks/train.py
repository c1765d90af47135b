"""Case 914 - gradient monitor hooks that only read gradients (correct)

Source: https://github.com/TransformerLensOrg/TransformerLens/issues/1160
        "This is not an issue if your return None, since the original gradient is passed through."
Category: correct (invariant 7)
EXPECT: no findings

Reported symptom:
    None. A GradMonitor registers a tensor hook on every parameter to log the
    per-parameter gradient norm, and the training loop reads .grad to clip.

Root cause:
    None. The hooks return None and only append a Python float to a log; they
    change neither the gradient nor any parameter or buffer. Reading gradients
    for clipping and logging is a normal check.

Ground truth a good tool should report:
    Nothing.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from monitor import GradMonitor

torch.manual_seed(0)

x = torch.randn(512, 10)
y = torch.tanh(x[:, :3].sum(1, keepdim=True))

model = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
monitor = GradMonitor(model)

for step in range(30):
    idx = torch.randint(0, 512, (64,))
    loss = F.mse_loss(model(x[idx]), y[idx])
    if step == 0:
        first = loss.item()
    optimizer.zero_grad()
    loss.backward()
    total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()

monitor.remove()
print(f"loss {first:.4f} -> {loss.item():.4f}  last grad norm {total_norm.item():.4f}")
print(f"monitored tensors: {len(monitor.summary())}")
