"""Case 536 - per-sample losses computed in a worker pool come back detached

Source: https://github.com/pytorch/pytorch/issues/12202
        "after it gets into the sub-process which is get_reward_loss, the gradient is disconnected."
Category: 8 - tensors that require grad do not leave autograd silently

Reported symptom:
    To speed up sample-specific, non-batchable loss computation, the batch is
    split with torch.chunk and sent to a pool with starmap. Training runs, but the
    network never improves: its parameters get no gradient.

Root cause:
    Everything handed to a process pool is pickled and rebuilt on the other side.
    A pickled tensor comes back as a brand-new leaf (its grad_fn is lost), so
    the losses computed in the workers depend only on these new leaves, not on the
    network that produced the features. backward() runs and stops at the copies.

Ground truth a good tool should report:
    The loss does not depend on the model parameters (no parameter gets a
    gradient); the features leave the autograd graph when they are sent through
    the pool in losses.py (the `pool.starmap(get_reward_loss, ...)` line).
"""
import torch
import torch.nn as nn

from losses import batch_reward_loss
from utils.parallel import SerialPool

torch.manual_seed(0)

x = torch.randn(96, 6)
lengths = torch.randint(3, 9, (96,))
steps = x[:, :1] * 0.5 + 0.1 * torch.arange(8)[None, :]
targets = [torch.cat([lengths[i:i + 1].float(), steps[i].cumsum(0)]) for i in range(96)]

net = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 8))
optimizer = torch.optim.Adam(net.parameters(), lr=5e-3)

with SerialPool(processes=4) as pool:
    for step in range(20):
        idx = torch.randint(0, 96, (16,)).tolist()
        loss = batch_reward_loss(net(x[idx]), [targets[i] for i in idx], pool)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

print(f"net grad is None: {net[0].weight.grad is None}")
print(f"final loss {loss.item():.4f}")
