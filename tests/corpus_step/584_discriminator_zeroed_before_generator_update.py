"""Case 584 - the discriminator is zeroed before the generator update, not before its own

Source: https://github.com/Lightning-AI/pytorch-lightning/issues/557
        "The optimizer.zero_grad() for discriminator is then only called once
        all the gradients are accumulated, including the ones coming from the
        update of the generator."
Category: 3 - a step consumes exactly the gradients meant for it

Reported symptom:
    The GAN template trains, but the discriminator never becomes a useful
    critic; printing the discriminator's gradients at the start of its update
    shows they are not zero.

Root cause:
    Both optimizers are cleared at the top of the iteration. The generator
    update comes first and its loss is backpropagated through the
    discriminator, filling the discriminator's .grad; the discriminator's
    backward is then added on top, and its step applies the generator's
    objective together with its own.

Ground truth a good tool should report:
    The discriminator step consumes gradients of the generator's backward,
    which the generator's step already used; `opt_d.zero_grad()` belongs right
    before the discriminator's loss is backpropagated.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

real_data = torch.randn(1024, 2) @ torch.tensor([[1.0, 0.5], [0.0, 0.3]]) + 2.0
generator = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 2))
discriminator = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
opt_g = torch.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0.5, 0.999))

for it in range(25):
    real = real_data[torch.randint(0, 1024, (64,))]
    opt_g.zero_grad()
    opt_d.zero_grad()  # <- CAUSE

    fake = generator(torch.randn(64, 8))
    g_loss = F.binary_cross_entropy_with_logits(discriminator(fake), torch.ones(64, 1))
    g_loss.backward()
    opt_g.step()

    real_loss = F.binary_cross_entropy_with_logits(discriminator(real), torch.ones(64, 1))
    fake_loss = F.binary_cross_entropy_with_logits(discriminator(fake.detach()), torch.zeros(64, 1))
    d_loss = (real_loss + fake_loss) / 2
    d_loss.backward()
    opt_d.step()

print(f"g {g_loss.item():.4f} d {d_loss.item():.4f}")
