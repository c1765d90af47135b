"""Case 362 - correct: VQ-VAE with codebook and commitment losses, .detach() on each side

Source: https://github.com/MishaLaskin/vqvae/pull/20 ("Codebook loss ... uses
        z.detach() - z_q -> updates embeddings only; Commitment loss ... uses
        z - z_q.detach() -> updates encoder only") and
        https://github.com/andylolu2/jax-vqvae-gpt/issues/2 (compute both losses
        before applying the straight-through estimator)
Category: correct code a naive tool flags (deliberate .detach() / stop-gradient)

What the code does:
    An MLP encoder produces z_e, the nearest codebook vector z_q is looked up
    (argmin, not differentiable), and
        codebook loss   = ||sg[z_e] - z_q||^2   -> trains the codebook only
        commitment loss = ||z_e - sg[z_q]||^2   -> trains the encoder only
        straight-through: z_st = z_e + (z_q - z_e).detach() feeds the decoder,
    so the reconstruction gradient reaches the encoder "through" the
    quantiser.  Every parameter (encoder, codebook, decoder) gets a gradient.

Why a naive tool might flag it:
    Three .detach() calls in the middle of the model, an argmin in the path,
    and the same tensors appearing detached in one loss and attached in
    another.

Ground truth a good tool should report:
    Nothing: the stop-gradients are the algorithm.
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        step  0 loss 1.1294 codes in use 4
        step 75 loss 0.3774 codes in use 3
        step 149 loss 0.0297 codes in use 4
        every parameter got a gradient: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyVQVAE(nn.Module):
    def __init__(self, n_in=16, dim=4, n_codes=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n_in, 32), nn.ReLU(), nn.Linear(32, dim))
        self.codebook = nn.Embedding(n_codes, dim)
        self.codebook.weight.data.uniform_(-1, 1)
        self.decoder = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, n_in))

    def forward(self, x):
        z_e = self.encoder(x)
        codes = torch.cdist(z_e, self.codebook.weight).argmin(dim=1)
        z_q = self.codebook(codes)
        codebook_loss = F.mse_loss(z_q, z_e.detach())
        commitment_loss = F.mse_loss(z_e, z_q.detach())
        z_st = z_e + (z_q - z_e).detach()
        return self.decoder(z_st), codebook_loss, commitment_loss, codes


model = TinyVQVAE()
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
data = torch.randn(4, 16).repeat(32, 1) + 0.05 * torch.randn(128, 16)
beta = 0.25

for step in range(150):
    optimizer.zero_grad()
    recon, cb_loss, commit_loss, codes = model(data)
    loss = F.mse_loss(recon, data) + cb_loss + beta * commit_loss
    loss.backward()
    optimizer.step()
    if step in (0, 75, 149):
        print(f"step {step:2d} loss {loss.item():.4f} codes in use {codes.unique().numel()}")

print("every parameter got a gradient:",
      all(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters()))
