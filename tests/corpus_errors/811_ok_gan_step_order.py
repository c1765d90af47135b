"""Case 811 - GAN step that re-scores fakes after the discriminator update

Source: pytorch/pytorch test/test_autograd.py, test_inplace / test_no_grad_modifies_version (the ordering that keeps saved weights unmodified)
Category: correct

Reported symptom:
    none: the script runs to completion without error or warning.

Root cause:
    No bug. The discriminator loss uses fake.detach(), so its backward touches only
    D; after optD.step() changes D's weights in place, the generator loss is built
    from a fresh D(fake) whose graph saved the updated weights. No graph is walked
    after the tensors it saved were modified, and no graph is backpropagated twice.

Ground truth a good tool should report:
    Nothing.

EXPECT: no findings
"""
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)

G = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 2))
D = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))

for it in range(3):
    real = torch.randn(16, 2) * 0.3 + 1.0
    fake = G(torch.randn(16, 8))
    d_real, d_fake = D(real), D(fake.detach())
    loss_d = F.binary_cross_entropy_with_logits(d_real, torch.ones_like(d_real)) + F.binary_cross_entropy_with_logits(
        d_fake, torch.zeros_like(d_fake)
    )
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()

    d_fake_for_g = D(fake)
    loss_g = F.binary_cross_entropy_with_logits(d_fake_for_g, torch.ones_like(d_fake_for_g))
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    print(f"iter {it} D {loss_d.item():.3f} G {loss_g.item():.3f}")
