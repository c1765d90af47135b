"""Case 583 - zero_grad() runs after every micro-batch, outside the accumulation condition

Source: https://github.com/gaozhihan/PreDiff/issues/32
        "you call .zero_grad() outside the IF condition in your VAE training
        script ... Otherwise the accumulated gradient ... will be erased."
Category: 3 - a step consumes exactly the gradients meant for it

Reported symptom:
    Training the VAE with gradient accumulation gives the same noisy curves
    as without it; raising the accumulation count changes nothing but the
    number of updates.

Root cause:
    In the trainer the optimizer steps only when the accumulation counter is
    reached, but opt.zero_grad() is indented one level too far out, at the
    level of the `if`: it runs after every micro-batch and erases the
    gradients of the micro-batches before the last one of each window.

Ground truth a good tool should report:
    Gradients produced by backward are discarded before any step uses them;
    the `self.opt.zero_grad()` in trainer.py belongs inside the `if`, after
    self.opt.step().
"""
import torch
import torch.nn as nn


class VAE(nn.Module):
    def __init__(self, latent=4):
        super().__init__()
        self.enc = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 2 * latent))
        self.dec = nn.Sequential(nn.Linear(latent, 32), nn.ReLU(), nn.Linear(32, 64), nn.Sigmoid())

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.dec(z).view_as(x), mu, logvar
