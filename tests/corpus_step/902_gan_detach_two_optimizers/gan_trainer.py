"""Case 902 - GAN with two optimizers and detach (correct)

Source: https://github.com/junyanz/pytorch-CycleGAN-and-pix2pix/issues/916
        "When updating D, we don't need to compute gradients for G. That's why we used `detach` in `backward_D_basic'."
Category: correct (invariant 3)
EXPECT: no findings

Reported symptom:
    None. Standard alternating GAN update on a 2-D Gaussian.

Root cause:
    None. The discriminator step uses fake.detach(), so the generator gets no
    gradient from it; each optimizer zeroes its own gradients right before its
    own backward, so the gradients the generator loss leaves on D are cleared
    before the next D step. The generator learns to match the real mean.

Ground truth a good tool should report:
    Nothing. G receiving no gradient during the D step and D receiving gradients
    during the G step (then cleared) is intended.
"""
import torch
import torch.nn.functional as F


class GANTrainer:
    def __init__(self, generator, discriminator, z_dim=4, lr=5e-3):
        self.G, self.D, self.z_dim = generator, discriminator, z_dim
        self.opt_g = torch.optim.Adam(self.G.parameters(), lr=lr, betas=(0.5, 0.999))
        self.opt_d = torch.optim.Adam(self.D.parameters(), lr=lr, betas=(0.5, 0.999))

    def train_step(self, real):
        n = real.shape[0]
        ones, zeros = torch.ones(n, 1), torch.zeros(n, 1)
        fake = self.G(torch.randn(n, self.z_dim))

        self.opt_d.zero_grad()
        d_loss = (F.binary_cross_entropy_with_logits(self.D(real), ones)
                  + F.binary_cross_entropy_with_logits(self.D(fake.detach()), zeros))
        d_loss.backward()
        self.opt_d.step()

        self.opt_g.zero_grad()
        g_loss = F.binary_cross_entropy_with_logits(self.D(fake), ones)
        g_loss.backward()
        self.opt_g.step()
        return g_loss.item(), d_loss.item()
