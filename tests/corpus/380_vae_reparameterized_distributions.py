"""A VAE with torch.distributions: rsample for the reparameterisation trick and an
analytic KL (correct)."""

import torch
from torch import nn
from torch.distributions import Normal, kl_divergence

torch.manual_seed(0)
enc = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 8))
dec = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 20))
opt = torch.optim.Adam([*enc.parameters(), *dec.parameters()], lr=1e-3)
prior = Normal(torch.zeros(4), torch.ones(4))
for step in range(5):
    x = torch.rand(16, 20)
    mu, log_var = enc(x).chunk(2, dim=-1)
    posterior = Normal(mu, torch.exp(0.5 * log_var))
    z = posterior.rsample()
    recon = nn.functional.binary_cross_entropy_with_logits(dec(z), x, reduction="sum") / 16
    kl = kl_divergence(posterior, prior).sum(-1).mean()
    loss = recon + kl
    opt.zero_grad()
    loss.backward()
    opt.step()
print(float(loss))
