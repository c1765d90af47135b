"""Correct 330 - WGAN-GP gradient penalty (double backward) and a Hessian-vector-product curvature probe

Pattern: https://github.com/caogang/wgan-gp
         (gradient penalty: autograd.grad(critic(interp), interp,
         grad_outputs=ones, create_graph=True), penalty backpropagated into the
         critic; generator step with the critic's parameters not updated)
Category: correct (double backward)

What it does:
    A 2-D toy WGAN-GP.  The critic step detaches the generator's samples,
    builds random interpolates that require grad, takes the critic's gradient
    w.r.t. them with create_graph=True and adds lambda * (||grad|| - 1)^2 to
    the critic loss, so the backward differentiates through the first
    gradient.  Five critic steps per generator step; the generator step does
    not detach.  Every 10 generator steps a Hessian-vector product of the
    critic loss w.r.t. the critic's first-layer weight is taken (grad with
    create_graph=True, then grad of <g, v>) to log curvature; it does not
    touch .grad.

Why a naive tool might flag it:
    create_graph=True, autograd.grad on a non-leaf input (the interpolates are
    computed from real and fake samples), a backward that goes through a
    gradient, the critic's parameters receiving gradients during the
    generator step that are zeroed before they are used.

Ground truth a good tool should report:
    Nothing.
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        gen step 0: critic loss 2.382, gp 0.114, hvp norm 2.0963
        gen step 10: critic loss -1.977, gp 0.031, hvp norm 2.9397
        gen step 20: critic loss 0.123, gp 0.001, hvp norm 2.8679
        mean of generated samples: [1.81, -2.34] (target [2.0, -1.0])
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

gen = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
critic = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
opt_g = torch.optim.Adam(gen.parameters(), lr=1e-2, betas=(0.5, 0.9))
opt_c = torch.optim.Adam(critic.parameters(), lr=5e-3, betas=(0.5, 0.9))
gp_weight = 10.0


def real_batch(n=64):
    return torch.randn(n, 2) * 0.3 + torch.tensor([2.0, -1.0])


def gradient_penalty(real, fake):
    alpha = torch.rand(real.size(0), 1)
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    scores = critic(interp)
    (grads,) = torch.autograd.grad(scores, interp, grad_outputs=torch.ones_like(scores), create_graph=True)
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


for g_step in range(30):
    for _ in range(5):
        real = real_batch()
        fake = gen(torch.randn(64, 4)).detach()
        gp = gradient_penalty(real, fake)
        loss_c = critic(fake).mean() - critic(real).mean() + gp_weight * gp
        opt_c.zero_grad()
        loss_c.backward()
        opt_c.step()

    loss_g = -critic(gen(torch.randn(64, 4))).mean()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()

    if g_step % 10 == 0:
        w = critic[0].weight
        real, fake = real_batch(), gen(torch.randn(64, 4)).detach()
        loss_probe = critic(fake).mean() - critic(real).mean()
        (g,) = torch.autograd.grad(loss_probe, w, create_graph=True)
        v = torch.randn_like(w)
        (hv,) = torch.autograd.grad((g * v).sum(), w)
        print(f"gen step {g_step}: critic loss {loss_c.item():.3f}, gp {gp.item():.3f}, "
              f"hvp norm {hv.norm().item():.4f}")

with torch.no_grad():
    print("mean of generated samples:", [round(v, 2) for v in gen(torch.randn(500, 4)).mean(0).tolist()],
          "(target [2.0, -1.0])")
