"""Case 603 - WGAN-GP gradient penalty with a grad_outputs of the wrong shape (entry point)

Source: pytorch/pytorch test/test_autograd.py, test_grad (the "Mismatch in shape: grad_output[0] has a shape of" check)
Category: backward-arguments

Reported symptom:
    RuntimeError: Mismatch in shape: grad_output[0] has a shape of torch.Size([16]) and output[0] has a shape of torch.Size([16, 1]).

Root cause:
    losses.gradient_penalty passes grad_outputs=torch.ones(batch) to
    torch.autograd.grad while the critic output is [batch, 1]; autograd.grad needs
    a grad_output of exactly the output's shape.

Ground truth a good tool should report:
    losses.py, the `ones = torch.ones(b)` line used as grad_outputs (should be
    torch.ones_like(scores)); raised by the torch.autograd.grad call in
    gradient_penalty, reached from the critic step below.
"""
import torch

from losses import critic_loss, gradient_penalty
from models import Critic, Generator

torch.manual_seed(0)

G, D = Generator(), Critic()
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3, betas=(0.5, 0.9))
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.5, 0.9))
batch, lam = 16, 10.0

for it in range(3):
    real = torch.randn(batch, 2) * 0.5 + torch.tensor([2.0, -1.0])
    fake = G(torch.randn(batch, 4)).detach()
    loss_d = critic_loss(D, real, fake) + lam * gradient_penalty(D, real, fake)
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()

    loss_g = -D(G(torch.randn(batch, 4))).mean()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    print(f"iter {it} d={loss_d.item():.3f} g={loss_g.item():.3f}")
