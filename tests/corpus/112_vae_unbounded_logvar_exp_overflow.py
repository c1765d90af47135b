"""Case 112 - tabular VAE: unbounded logvar, exp(0.5 * logvar) overflows -> inf latent, NaN loss

Source: https://github.com/vanderschaarlab/synthcity/issues/331
        "Numerical instability in VAE" ("Unbounded log variances in the output of the VAE
        encoder explode when exponentiated in the reparameterization trick ... Clamp the
        logvar ... to [-30, 20]")
Category: inf-in-forward

Reported symptom:
    Synthetic-data VAE on raw tabular columns: recon loss nan, KL inf, NaN gradients.

Root cause:
    Income and balance columns are in the tens of thousands and go unscaled into the
    encoder, so the logvar head outputs values in the thousands.  std = exp(0.5 * logvar)
    overflows to inf, z = mu + eps * std is +-inf, and the decoder's Linear produces
    inf - inf = NaN.  logvar.exp() in the KL term overflows as well (KL = inf).

Ground truth a good tool should report:
    First non-finite value in forward: +inf from torch.exp at line 50 (logvar > ~177,
    produced unbounded at line 49); it becomes NaN in the decoder and in the loss, and
    logvar.exp() at line 68 is inf too; NaN reaches vae.logvar.weight.grad.  Fix: clamp
    logvar (line 49) or scale the input columns.
    EXPECT: kind=inf_forward; first_inf_line=50; cause_line=50|49; nan_op=linear;
            affected=logvar.weight.grad

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        max logvar: 7922.59814453125
        recon_loss = nan  kl = inf  loss = nan
        logvar.weight.grad has NaN: True
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class TabularVAE(nn.Module):
    def __init__(self, n_features=5, latent=3):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(n_features, 32), nn.ReLU())
        self.mu = nn.Linear(32, latent)
        self.logvar = nn.Linear(32, latent)
        self.dec = nn.Sequential(nn.Linear(latent, 32), nn.ReLU(), nn.Linear(32, n_features))

    def forward(self, x):
        h = self.enc(x)
        mu, logvar = self.mu(h), self.logvar(h)  # <- CAUSE: logvar is unbounded (clamp it here, e.g. to [-30, 20])
        std = torch.exp(0.5 * logvar)  # <- CAUSE,INF: exp overflows to inf once logvar > ~177
        z = mu + torch.randn_like(std) * std
        return self.dec(z), mu, logvar


# synthetic-data generator trained on raw tabular columns (age, income, balance, ...)
table = torch.stack([
    torch.randint(18, 90, (32,)).float(),
    torch.empty(32).uniform_(2e4, 2e5),
    torch.empty(32).uniform_(-5e3, 5e4),
    torch.randint(0, 2, (32,)).float(),
    torch.randint(1, 6, (32,)).float(),
], dim=1)

vae = TabularVAE()
recon, mu, logvar = vae(table)
print("max logvar:", logvar.max().item())
recon_loss = ((recon - table) ** 2).sum(1).mean()
kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(1).mean()  # <- INF: logvar.exp() overflows as well
loss = recon_loss + kl
print("recon_loss =", recon_loss.item(), " kl =", kl.item(), " loss =", loss.item())
loss.backward()
print("logvar.weight.grad has NaN:", torch.isnan(vae.logvar.weight.grad).any().item())
