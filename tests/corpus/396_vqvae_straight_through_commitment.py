"""Clean 396 - VQ-VAE: straight-through estimator and stop-gradient codebook /
commitment losses

What it does:
    The encoder output z is snapped to its nearest codebook vector (argmin over
    distances, not differentiable).  The decoder receives z + (z_q - z).detach(), so
    its gradient is copied to the encoder; the codebook is trained by
    ||sg[z] - e||^2 and the encoder by beta * ||z - sg[e]||^2.

Why it is correct (not a bug):
    Each detach() is a deliberate stop-gradient from the VQ-VAE objective: the
    argmin indices carry no gradient by design, the straight-through term passes the
    decoder gradient to the encoder, and the codebook still learns through the
    codebook loss (its weight gets a gradient every step).
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        step 0: recon=1.0576  vq=0.0573  codes used=12
        step 1: recon=1.0539  vq=0.0498  codes used=13
        step 2: recon=1.0509  vq=0.0447  codes used=12
        step 3: recon=1.0478  vq=0.0415  codes used=12
        step 4: recon=1.0452  vq=0.0396  codes used=12
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class VectorQuantizer(nn.Module):
    def __init__(self, n_codes=16, dim=8, beta=0.25):
        super().__init__()
        self.codebook = nn.Embedding(n_codes, dim)
        self.codebook.weight.data.uniform_(-1 / n_codes, 1 / n_codes)
        self.beta = beta

    def forward(self, z):
        d = (z.pow(2).sum(1, keepdim=True) - 2 * z @ self.codebook.weight.t()
             + self.codebook.weight.pow(2).sum(1))
        idx = d.argmin(dim=1)
        z_q = self.codebook(idx)
        codebook_loss = F.mse_loss(z_q, z.detach())
        commitment_loss = F.mse_loss(z, z_q.detach())
        z_st = z + (z_q - z).detach()
        return z_st, codebook_loss + self.beta * commitment_loss, idx


class VQVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 8))
        self.vq = VectorQuantizer()
        self.decoder = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 32))

    def forward(self, x):
        z_st, vq_loss, idx = self.vq(self.encoder(x))
        return self.decoder(z_st), vq_loss, idx


model = VQVAE()
optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
data = torch.randn(128, 32)
for step in range(5):
    recon, vq_loss, idx = model(data)
    rec_loss = F.mse_loss(recon, data)
    loss = rec_loss + vq_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: recon={rec_loss.item():.4f}  vq={vq_loss.item():.4f}"
          f"  codes used={idx.unique().numel()}")
