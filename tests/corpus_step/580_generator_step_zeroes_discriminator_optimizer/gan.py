"""Case 580 - the generator update clears the discriminator's optimizer

Source: https://github.com/ufal/npfl138/issues/57
        "I suppose it should be self.optimizer[\"generator\"]."
Category: 3 - a step consumes exactly the gradients meant for it

Reported symptom:
    The course GAN on a toy 2-D distribution trains without any error, but the
    generator's samples oscillate and never settle on the data.

Root cause:
    The model keeps its optimizers in a dict. In the generator half of
    train_step the gradients are cleared with
    self.optimizer["discriminator"].zero_grad() (copied from the half above),
    so the generator's gradients are never cleared: each generator step applies
    the sum of every generator loss so far.

Ground truth a good tool should report:
    The generator step consumes gradients that earlier generator steps already
    used; the line to change is the zero_grad() of the discriminator's
    optimizer in the generator half of gan.py.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GAN(nn.Module):
    def __init__(self, z_dim):
        super().__init__()
        self.z_dim = z_dim
        self.generator = nn.Sequential(nn.Linear(z_dim, 32), nn.ReLU(), nn.Linear(32, 2))
        self.discriminator = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 1))
        self.optimizer = {
            "generator": torch.optim.Adam(self.generator.parameters(), lr=1e-3),
            "discriminator": torch.optim.Adam(self.discriminator.parameters(), lr=1e-3),
        }

    def train_step(self, real):
        z = torch.randn(len(real), self.z_dim)

        self.optimizer["discriminator"].zero_grad()
        fake = self.generator(z)
        d_loss = (
            F.binary_cross_entropy_with_logits(self.discriminator(real), torch.ones(len(real), 1))
            + F.binary_cross_entropy_with_logits(self.discriminator(fake.detach()), torch.zeros(len(real), 1))
        )
        d_loss.backward()
        self.optimizer["discriminator"].step()

        self.optimizer["discriminator"].zero_grad()  # <- CAUSE
        g_loss = F.binary_cross_entropy_with_logits(self.discriminator(fake), torch.ones(len(real), 1))
        g_loss.backward()
        self.optimizer["generator"].step()
        return {"d": d_loss.item(), "g": g_loss.item()}
