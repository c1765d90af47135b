"""Correct 341 - vanilla GAN: alternating D and G steps, fake.detach() for the D step

Source: the DCGAN training loop pattern of https://github.com/pytorch/examples/blob/main/dcgan/main.py
        (discussed in https://github.com/pytorch/examples/issues/361: G's backward also
        writes D's .grad, which is harmless because D's grads are zeroed before D's
        next backward)
Category: correct script (training-step protocol, two optimizers)

What it does:
    A 2-D toy GAN.  One generator forward per iteration; D is trained on
    `fake.detach()` (no gradient into G), then G is trained through D on the same
    `fake`.  G's backward also fills D's .grad, and those gradients are never used
    by opt_D: they are cleared by `opt_D.zero_grad()` at the start of the next D
    step.  D(fake) for the G loss is recomputed after opt_D.step(), so no saved
    weight is modified in place.  Tricky-but-legal: discarded D gradients, one
    `fake` used by two losses, two optimizers stepping different modules.

Ground truth a good tool should report:
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        step   0: d_loss 1.2064 g_loss 0.6050
        step  50: d_loss 1.2377 g_loss 0.5567
        step  99: d_loss 1.4511 g_loss 0.8014
        generated mean 2.676 (real mean ~2.0)
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

Z_DIM = 4
G = nn.Sequential(nn.Linear(Z_DIM, 32), nn.LeakyReLU(0.2), nn.Linear(32, 2))
D = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
opt_G = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999))
opt_D = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.999))
bce = nn.BCEWithLogitsLoss()


def sample_real(n):
    return torch.randn(n, 2) * 0.3 + 2.0


for step in range(100):
    real = sample_real(64)
    fake = G(torch.randn(64, Z_DIM))
    ones, zeros = torch.ones(64, 1), torch.zeros(64, 1)

    # discriminator: real vs. detached fake
    opt_D.zero_grad()
    d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)
    d_loss.backward()
    opt_D.step()

    # generator: fool the (updated) discriminator
    opt_G.zero_grad()
    g_loss = bce(D(fake), ones)
    g_loss.backward()
    opt_G.step()

    if step in (0, 50, 99):
        print(f"step {step:3d}: d_loss {d_loss.item():.4f} g_loss {g_loss.item():.4f}")

with torch.no_grad():
    print(f"generated mean {G(torch.randn(512, Z_DIM)).mean().item():.3f} (real mean ~2.0)")
