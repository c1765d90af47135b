"""Case 830 - WGAN-GP gradient penalty through a non-reentrant checkpointed critic

Source: pytorch/pytorch test/test_utils.py, TestCheckpoint.test_checkpoint_valid (autograd.grad works with use_reentrant=False)
Category: correct

Reported symptom:
    none - the script trains for a few steps and exits normally.

Root cause:
    none - the critic trunk is checkpointed with use_reentrant=False, which
    supports torch.autograd.grad(..., create_graph=True); the interpolated
    samples require grad before they enter the checkpointed region.

Ground truth a good tool should report:
    Nothing: checkpoint + autograd.grad + double backward is used correctly.
EXPECT: no findings
"""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class Critic(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(dim, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh())
        self.out = nn.Linear(64, 1)

    def forward(self, x):
        return self.out(checkpoint(self.trunk, x, use_reentrant=False))


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1)
    mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    score = critic(mixed)
    grads, = torch.autograd.grad(score.sum(), mixed, create_graph=True)
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


critic = Critic(8)
generator = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 8))
opt_c = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.0, 0.9))
opt_g = torch.optim.Adam(generator.parameters(), lr=1e-4, betas=(0.0, 0.9))

for step in range(3):
    real = torch.randn(16, 8)
    fake = generator(torch.randn(16, 4))
    opt_c.zero_grad()
    gp = gradient_penalty(critic, real, fake.detach())
    loss_c = critic(fake.detach()).mean() - critic(real).mean() + 10.0 * gp
    loss_c.backward()
    opt_c.step()

    opt_g.zero_grad()
    loss_g = -critic(generator(torch.randn(16, 4))).mean()
    loss_g.backward()
    opt_g.step()
    print(f"step {step} critic {loss_c.item():.3f} gen {loss_g.item():.3f}")
