"""Case 513 - discriminator step also applies the gradients left by the generator loss

Source: https://github.com/FoundationVision/OmniTokenizer/issues/15
        "we will update the discriminator using some grads from generator loss!"
Category: 3 - a step consumes exactly the gradients meant for it

Reported symptom:
    The discriminator does not learn to separate real from generated samples and
    the GAN does not converge; printing the discriminator's .grad just before its
    own backward shows it is not zero.

Root cause:
    GANTrainer.train_step clears the discriminator's gradients at the very start
    of the iteration, then runs the generator update, whose loss backpropagates
    through D and deposits gradients on D's parameters (pushing D to call fakes
    real). The discriminator loss is added on top and opt_d.step() applies both.

Ground truth a good tool should report:
    opt_d.step() consumes gradients produced by the generator loss backward as
    well as by the discriminator loss; D's zero_grad happens too early in
    gan_trainer.py (the `self.opt_d.zero_grad()` at the top of train_step; it must
    sit right before the discriminator backward).
"""
import torch
import torch.nn.functional as F


class GANTrainer:
    def __init__(self, generator, discriminator, z_dim=4, lr=2e-3):
        self.G, self.D, self.z_dim = generator, discriminator, z_dim
        self.opt_g = torch.optim.Adam(self.G.parameters(), lr=lr, betas=(0.5, 0.999))
        self.opt_d = torch.optim.Adam(self.D.parameters(), lr=lr, betas=(0.5, 0.999))

    def train_step(self, real):
        n = real.shape[0]
        ones, zeros = torch.ones(n, 1), torch.zeros(n, 1)
        self.opt_d.zero_grad()  # <- CAUSE

        # generator update: make D call the fakes real
        self.opt_g.zero_grad()
        fake = self.G(torch.randn(n, self.z_dim))
        g_loss = F.binary_cross_entropy_with_logits(self.D(fake), ones)
        g_loss.backward()
        self.opt_g.step()

        # discriminator update
        d_loss = (F.binary_cross_entropy_with_logits(self.D(real), ones)
                  + F.binary_cross_entropy_with_logits(self.D(fake.detach()), zeros))
        d_loss.backward()
        self.opt_d.step()
        return g_loss.item(), d_loss.item()
