"""Case 577 - the discriminator's zero_grad() calls the generator's optimizer

Source: https://github.com/Lornatang/ESRGAN-PyTorch/issues/39
        "line 147 and 148 in train_gan.py are all g_optimizer, I wonder the
        second should be d_optimizer?"
Category: 3 - a step consumes exactly the gradients meant for it

Reported symptom:
    The super-resolution GAN trains without errors, but the discriminator's
    updates keep growing and its loss swings from one iteration to the next.

Root cause:
    Before the discriminator update the script clears gradients with
    g_optimizer.zero_grad() where d_optimizer.zero_grad() was meant (a copy of
    the line above it). The discriminator's gradients are never cleared: every
    discriminator step applies the sum of all earlier discriminator losses and
    of every generator loss backpropagated through it.

Ground truth a good tool should report:
    The discriminator step consumes gradients that earlier steps already used;
    the line to change is the second `g_optimizer.zero_grad()`, which should
    clear d_optimizer.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

lr_images = torch.rand(256, 3, 8, 8)
hr_images = F.interpolate(lr_images, scale_factor=2, mode="bilinear")

generator = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1), nn.PReLU(), nn.Conv2d(16, 12, 3, padding=1), nn.PixelShuffle(2)
)
discriminator = nn.Sequential(
    nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(16 * 8 * 8, 1)
)
g_optimizer = torch.optim.Adam(generator.parameters(), lr=1e-4)
d_optimizer = torch.optim.Adam(discriminator.parameters(), lr=1e-4)

for it in range(20):
    idx = torch.randint(0, 256, (16,))
    lr, hr = lr_images[idx], hr_images[idx]

    g_optimizer.zero_grad()
    sr = generator(lr)
    pixel_loss = F.l1_loss(sr, hr)
    adv_loss = F.binary_cross_entropy_with_logits(discriminator(sr), torch.ones(16, 1))
    g_loss = pixel_loss + 1e-3 * adv_loss
    g_loss.backward()
    g_optimizer.step()

    g_optimizer.zero_grad()  # <- CAUSE
    real_loss = F.binary_cross_entropy_with_logits(discriminator(hr), torch.ones(16, 1))
    fake_loss = F.binary_cross_entropy_with_logits(discriminator(sr.detach()), torch.zeros(16, 1))
    d_loss = (real_loss + fake_loss) / 2
    d_loss.backward()
    d_optimizer.step()

print(f"g {g_loss.item():.4f} d {d_loss.item():.4f}")
