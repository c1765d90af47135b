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

from gan_trainer import GANTrainer
from nets import make_discriminator, make_generator

torch.manual_seed(0)

target_mean = torch.tensor([2.0, -1.0])
real_data = torch.randn(2048, 2) * 0.3 + target_mean
trainer = GANTrainer(make_generator(), make_discriminator())


def mean_gap():
    with torch.no_grad():
        return (trainer.G(torch.randn(512, 4)).mean(0) - target_mean).norm().item()


start = mean_gap()
for step in range(80):
    batch = real_data[torch.randint(0, 2048, (64,))]
    g_loss, d_loss = trainer.train_step(batch)

print(f"distance of fake mean to real mean {start:.3f} -> {mean_gap():.3f}")
print(f"final g_loss {g_loss:.4f}  d_loss {d_loss:.4f}")
