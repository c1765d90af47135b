"""Case 614 - WGAN weight clipping done in-place on parameters with grad mode on

Source: pytorch/pytorch test/test_autograd.py, test_no_requires_grad_inplace (assertRaises RuntimeError for a.add_(5) on a leaf that requires grad)
Category: in-place

Reported symptom:
    RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.

Root cause:
    After each critic step the script clips the critic weights with p.clamp_(...).
    The parameters are leaf tensors that require grad, and grad mode is on, so
    autograd refuses the in-place update (it would have to record an op that
    overwrites a leaf).

Ground truth a good tool should report:
    The `p.clamp_(-clip, clip)` line must run under `with torch.no_grad():`.
"""
import torch
from torch import nn

torch.manual_seed(0)

critic = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 1))
gen = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
opt_c = torch.optim.RMSprop(critic.parameters(), lr=5e-4)
clip = 0.01

for it in range(3):
    real = torch.randn(64, 2) + 3.0
    fake = gen(torch.randn(64, 4)).detach()
    loss_c = critic(fake).mean() - critic(real).mean()
    opt_c.zero_grad()
    loss_c.backward()
    opt_c.step()
    for p in critic.parameters():
        p.clamp_(-clip, clip)  # <- CAUSE,ERROR
    print(f"iter {it} critic loss {loss_c.item():.4f}")
