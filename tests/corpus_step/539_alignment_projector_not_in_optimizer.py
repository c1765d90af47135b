"""Case 539 - the projector of a representation-alignment loss is never given to the optimizer

Source: https://github.com/CIntellifusion/GeometryForcing/issues/13
        "The learnable parameters of the class VGGTAlignmentLoss are never added to the
        optimizer." (maintainer: "The projector wasn't trained in the initial commit ...
        I solved this bug by adding projector to the optimizer.")
Category: 2 - every gradient backward produces is consumed

Reported symptom:
    The alignment term that should teach the diffusion model geometric features
    has no measurable effect: setting its weight to zero gives the same results.

Root cause:
    The alignment loss maps intermediate features of the denoiser through its own
    learnable projector and compares them with the features of a frozen
    geometry encoder. configure_optimizers() builds the optimizer from the
    denoiser's parameters only, so the projector keeps its random weights: its
    gradients are computed at every backward and never applied, and the
    alignment can only be reached by bending the denoiser towards a random map.

Ground truth a good tool should report:
    AlignmentLoss.projector receives gradients but belongs to no optimizer; the
    optimizer is built in configure_optimizers() from the denoiser's parameters
    only (the `return torch.optim.AdamW(...)` line).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Denoiser(nn.Module):
    def __init__(self, d=16, hidden=64):
        super().__init__()
        self.inp = nn.Linear(d + 1, hidden)
        self.mid = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, d)

    def forward(self, x_t, t):
        h = F.silu(self.inp(torch.cat([x_t, t[:, None]], 1)))
        h = F.silu(self.mid(h))
        return self.out(h), h


class AlignmentLoss(nn.Module):
    """Cosine alignment of the denoiser's hidden features with a frozen encoder's."""

    def __init__(self, hidden=64, feat_dim=8):
        super().__init__()
        self.projector = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, feat_dim))

    def forward(self, hidden_feats, target_feats):
        return 1 - F.cosine_similarity(self.projector(hidden_feats), target_feats, dim=1).mean()


def configure_optimizers(denoiser):
    return torch.optim.AdamW(denoiser.parameters(), lr=1e-3)  # <- CAUSE


denoiser = Denoiser()
align = AlignmentLoss()
geometry = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 8)).requires_grad_(False)
optimizer = configure_optimizers(denoiser)

data = torch.randn(512, 16) @ torch.randn(16, 16) * 0.5
projector_before = align.projector[0].weight.detach().clone()
for step in range(40):
    x0 = data[torch.randint(0, 512, (64,))]
    t = torch.rand(64)
    noise = torch.randn_like(x0)
    x_t = (1 - t[:, None]) * x0 + t[:, None] * noise
    pred, hidden = denoiser(x_t, t)
    with torch.no_grad():
        target = geometry(x0)
    loss = F.mse_loss(pred, noise - x0) + 0.5 * align(hidden, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

moved = (align.projector[0].weight.detach() - projector_before).abs().max().item()
print(f"loss {loss.item():.4f}  projector moved {moved:.6f}")
