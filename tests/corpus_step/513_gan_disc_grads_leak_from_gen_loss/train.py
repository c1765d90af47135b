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

from gan_trainer import GANTrainer
from nets import make_discriminator, make_generator

torch.manual_seed(0)

real_data = torch.randn(1024, 2) * 0.3 + torch.tensor([2.0, -1.0])
trainer = GANTrainer(make_generator(), make_discriminator())

for step in range(30):
    batch = real_data[torch.randint(0, 1024, (64,))]
    g_loss, d_loss = trainer.train_step(batch)

print(f"final g_loss {g_loss:.4f}  d_loss {d_loss:.4f}")
