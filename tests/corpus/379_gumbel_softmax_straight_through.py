"""A discrete latent with the straight-through Gumbel-softmax estimator (hard=True), the
decoder trained through it (correct)."""

import torch
from torch import nn

torch.manual_seed(0)
encoder = nn.Linear(12, 6)
decoder = nn.Linear(6, 12)
opt = torch.optim.Adam([*encoder.parameters(), *decoder.parameters()], lr=1e-3)
for step in range(6):
    x = torch.randn(16, 12)
    logits = encoder(x)
    code = nn.functional.gumbel_softmax(logits, tau=0.5, hard=True)
    recon = decoder(code)
    q = logits.softmax(-1)
    kl = (q * (q.clamp_min(1e-8).log() + torch.log(torch.tensor(6.0)))).sum(-1).mean()
    loss = nn.functional.mse_loss(recon, x) + 0.1 * kl
    opt.zero_grad()
    loss.backward()
    opt.step()
print(float(loss))
