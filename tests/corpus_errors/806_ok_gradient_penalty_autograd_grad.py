"""Case 806 - WGAN-GP gradient penalty with autograd.grad and matching grad_outputs

Source: pytorch/pytorch test/test_autograd.py, test_grad / test_grad_nonleaf (autograd.grad with create_graph=True and grad_outputs of the output's shape)
Category: correct

Reported symptom:
    none: the script runs to completion without error or warning.

Root cause:
    No bug. The penalty uses torch.autograd.grad(scores, interp,
    grad_outputs=torch.ones_like(scores), create_graph=True), so grad_outputs has
    exactly the critic output's shape, the input requires grad, and no .grad field
    takes part in the higher-order graph (no create_graph backward()). The fake
    batch is detached for the critic step, and the generator step re-scores fresh
    fakes.

Ground truth a good tool should report:
    Nothing.

EXPECT: no findings
"""
import torch
from torch import nn

torch.manual_seed(0)

G = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
D = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3, betas=(0.5, 0.9))
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.5, 0.9))


def gradient_penalty(critic, real, fake):
    eps = torch.rand(real.size(0), 1)
    interp = (eps * real + (1 - eps) * fake).requires_grad_(True)
    scores = critic(interp)
    (grads,) = torch.autograd.grad(scores, interp, grad_outputs=torch.ones_like(scores), create_graph=True)
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


for it in range(3):
    real = torch.randn(16, 2) * 0.5 + 2.0
    fake = G(torch.randn(16, 4)).detach()
    loss_d = D(fake).mean() - D(real).mean() + 10.0 * gradient_penalty(D, real, fake)
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()

    loss_g = -D(G(torch.randn(16, 4))).mean()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    print(f"iter {it} d={loss_d.item():.3f} g={loss_g.item():.3f}")
