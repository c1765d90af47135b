"""Correct 342 - WGAN-GP: gradient penalty through torch.autograd.grad(create_graph=True)

Source: the gradient-penalty pattern discussed in https://github.com/caogang/wgan-gp/issues/4
        and https://github.com/kuc2477/pytorch-wgan-gp/issues/1 (grad_outputs=ones,
        create_graph=True, retain_graph=True); n_critic critic steps per generator step
Category: correct script (double backward, alternating optimizers)

What it does:
    Critic trained n_critic=3 times per generator update.  The penalty takes
    d critic(x_hat) / d x_hat with create_graph=True, so `((|grad| - 1)^2)` is
    differentiable w.r.t. the critic's weights and its backward is a real
    double-backward.  The generator is stepped only every n_critic iterations and
    only after its own backward; the critic's gradients produced by the generator's
    backward are cleared by the critic's zero_grad() before they could be used.

Ground truth a good tool should report:
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        iter  0: critic 0.3892 gp 0.6308 | gen 0.0994
        iter 30: critic 1.9821 gp 0.0286 | gen -0.6844
        iter 59: critic -1.0628 gp 0.0119 | gen 0.3993
        generated mean: [-1.6, 0.134] (real mean [1, -1])
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

Z_DIM, X_DIM, N_CRITIC, LAMBDA = 3, 2, 3, 10.0
gen = nn.Sequential(nn.Linear(Z_DIM, 32), nn.ReLU(), nn.Linear(32, X_DIM))
critic = nn.Sequential(nn.Linear(X_DIM, 32), nn.Tanh(), nn.Linear(32, 1))
opt_g = torch.optim.Adam(gen.parameters(), lr=5e-3, betas=(0.5, 0.9))
opt_c = torch.optim.Adam(critic.parameters(), lr=5e-3, betas=(0.5, 0.9))


def gradient_penalty(real, fake):
    alpha = torch.rand(real.size(0), 1)
    x_hat = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    scores = critic(x_hat)
    grads = torch.autograd.grad(outputs=scores, inputs=x_hat, grad_outputs=torch.ones_like(scores),
                                create_graph=True, retain_graph=True)[0]
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


g_cost = torch.tensor(0.0)
for it in range(60):
    real = torch.randn(32, X_DIM) * 0.5 + torch.tensor([1.0, -1.0])
    fake = gen(torch.randn(32, Z_DIM)).detach()

    opt_c.zero_grad()
    gp = gradient_penalty(real, fake)
    c_cost = critic(fake).mean() - critic(real).mean()
    (c_cost + LAMBDA * gp).backward()
    opt_c.step()

    if it % N_CRITIC == 0:
        opt_g.zero_grad()
        g_cost = -critic(gen(torch.randn(32, Z_DIM))).mean()
        g_cost.backward()
        opt_g.step()

    if it in (0, 30, 59):
        print(f"iter {it:2d}: critic {c_cost.item():.4f} gp {gp.item():.4f} | gen {g_cost.item():.4f}")

with torch.no_grad():
    print("generated mean:", [round(v, 3) for v in gen(torch.randn(256, Z_DIM)).mean(0).tolist()], "(real mean [1, -1])")
