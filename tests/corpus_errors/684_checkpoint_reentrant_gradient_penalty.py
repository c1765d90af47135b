"""Case 684 - WGAN-GP gradient penalty through a reentrant-checkpointed critic

Source: pytorch/pytorch test/test_utils.py, TestCheckpoint.test_checkpoint_valid (assertRaisesRegex 'torch.utils.checkpoint is incompatible')
Category: activation checkpointing (reentrant)

Reported symptom:
    RuntimeError: When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` parameter to .backward(). To resolve this error, you can either set use_reentrant=False, or call .backward() without passing the `inputs` argument.

Root cause:
    The critic checkpoints its trunk with use_reentrant=True to save memory.
    The gradient penalty needs torch.autograd.grad of the critic score w.r.t.
    the interpolated samples; the reentrant implementation recomputes the
    forward inside its own backward call and only supports plain .backward(),
    so autograd.grad through it is rejected.

Ground truth a good tool should report:
    `checkpoint(..., use_reentrant=True)` in Critic.forward (CAUSE) is
    incompatible with the torch.autograd.grad call of the penalty (ERROR); use
    use_reentrant=False.
"""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class Critic(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(dim, 64), nn.LeakyReLU(0.2), nn.Linear(64, 64), nn.LeakyReLU(0.2))
        self.out = nn.Linear(64, 1)

    def forward(self, x):
        h = checkpoint(self.trunk, x, use_reentrant=True)  # <- CAUSE
        return self.out(h)


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1)
    mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    score = critic(mixed)
    grads, = torch.autograd.grad(score.sum(), mixed, create_graph=True)  # <- ERROR
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


critic = Critic(8)
generator = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 8))
opt_c = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.0, 0.9))

real = torch.randn(16, 8)
fake = generator(torch.randn(16, 4)).detach()
opt_c.zero_grad()
gp = gradient_penalty(critic, real, fake)
loss_c = critic(fake).mean() - critic(real).mean() + 10.0 * gp
loss_c.backward()
opt_c.step()
print("critic loss", loss_c.item())
