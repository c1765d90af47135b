"""Clean 402 - WGAN-GP: two optimizers that each zero their own gradients, fake samples
detached for the critic step, gradient penalty with create_graph=True

What it does:
    For each iteration: n_critic critic updates on real data and detached generator
    samples, with the gradient penalty computed by torch.autograd.grad(...,
    create_graph=True) on random interpolates; then one generator update through the
    critic.  Each optimizer zeroes its own parameters right before its backward.

Why it is correct (not a bug):
    fake.detach() in the critic step is intended (the generator is not trained
    there); create_graph=True is needed so the penalty is differentiable w.r.t. the
    critic weights; the generator's backward also writes .grad into the critic's
    parameters, but opt_c.zero_grad() runs before the next critic backward, so those
    gradients are never stepped.  The interpolates get requires_grad_(True) on a
    fresh tensor that is a leaf.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        iter 0: critic loss=7.9693  generator loss=-0.2556
        iter 1: critic loss=7.7239  generator loss=-0.2518
        iter 2: critic loss=7.6589  generator loss=-0.2477
        iter 3: critic loss=7.3397  generator loss=-0.2420
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
Z, D = 8, 2

generator = nn.Sequential(nn.Linear(Z, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, D))
critic = nn.Sequential(nn.Linear(D, 64), nn.LeakyReLU(0.2), nn.Linear(64, 64), nn.LeakyReLU(0.2),
                       nn.Linear(64, 1))
opt_g = torch.optim.Adam(generator.parameters(), lr=1e-4, betas=(0.5, 0.9))
opt_c = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.5, 0.9))
n_critic, lambda_gp, batch = 3, 10.0, 64


def real_batch(n):
    angle = torch.rand(n) * 6.2832
    return torch.stack([angle.cos(), angle.sin()], dim=1) * 2 + 0.05 * torch.randn(n, 2)


def gradient_penalty(real, fake):
    eps = torch.rand(real.shape[0], 1)
    interp = (eps * real + (1 - eps) * fake).requires_grad_(True)
    grads = torch.autograd.grad(critic(interp).sum(), interp, create_graph=True)[0]
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


for it in range(4):
    for _ in range(n_critic):
        real = real_batch(batch)
        fake = generator(torch.randn(batch, Z)).detach()
        c_loss = critic(fake).mean() - critic(real).mean() + lambda_gp * gradient_penalty(real, fake)
        opt_c.zero_grad()
        c_loss.backward()
        opt_c.step()
    g_loss = -critic(generator(torch.randn(batch, Z))).mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    print(f"iter {it}: critic loss={c_loss.item():.4f}  generator loss={g_loss.item():.4f}")
