"""Case 576 - the discriminator steps on gradients the student loss left in it

Source: https://github.com/leffff/FlowModels/issues/3
        "Wouldn't above code generate gradients on the discriminator as well?"
Category: 3 - a step consumes exactly the gradients meant for it

Reported symptom:
    Adversarial distillation (LADD) trains, but the discriminator drifts in the
    direction that helps the student instead of the one that separates real
    from generated latents; its loss stops going down.

Root cause:
    The student loss is backpropagated through the discriminator, so it fills
    the discriminator's .grad too. The trainer clears only the student's
    optimizer after the student step, and clears the discriminator's optimizer
    right after the discriminator's own step: at the next iteration the
    discriminator loss is added onto what the student loss left there, and the
    discriminator step applies both objectives.

Ground truth a good tool should report:
    The discriminator step consumes gradients of the student's backward, which
    the student step already used. Clear the discriminator's gradients after
    the student update (next to `self.student_opt.zero_grad()`), or move
    `self.disc_opt.zero_grad()` to just before the discriminator's backward.
"""
import torch.nn as nn


class Student(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 32), nn.SiLU(), nn.Linear(32, dim))

    def forward(self, noise):
        return self.net(noise)


class Discriminator(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))

    def forward(self, latent):
        return self.net(latent)
