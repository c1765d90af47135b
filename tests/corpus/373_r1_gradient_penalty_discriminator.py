"""GAN discriminator with an R1 gradient penalty on real samples (correct)."""

import torch
from torch import nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3, betas=(0.0, 0.99))
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.0, 0.99))
for step in range(4):
    real = torch.randn(16, 2) + 3.0
    real.requires_grad_(True)
    fake = G(torch.randn(16, 4)).detach()
    real_out = D(real)
    d_loss = nn.functional.softplus(D(fake)).mean() + nn.functional.softplus(-real_out).mean()
    (grad_real,) = torch.autograd.grad(real_out.sum(), real, create_graph=True)
    r1 = grad_real.pow(2).sum(dim=1).mean()
    opt_d.zero_grad()
    (d_loss + 5.0 * r1).backward()
    opt_d.step()
    g_loss = nn.functional.softplus(-D(G(torch.randn(16, 4)))).mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
print(float(d_loss), float(g_loss))
