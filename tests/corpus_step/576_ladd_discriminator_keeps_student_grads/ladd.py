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
import torch
import torch.nn.functional as F


class LADDTrainer:
    def __init__(self, student, disc, lr=2e-4):
        self.student, self.disc = student, disc
        self.student_opt = torch.optim.Adam(student.parameters(), lr=lr, betas=(0.0, 0.99))
        self.disc_opt = torch.optim.Adam(disc.parameters(), lr=lr, betas=(0.0, 0.99))

    def train_step(self, real):
        noise = torch.randn_like(real)
        fake = self.student(noise)

        real_logits = self.disc(real)
        fake_logits = self.disc(fake.detach())
        d_loss = F.softplus(-real_logits).mean() + F.softplus(fake_logits).mean()
        d_loss.backward()
        self.disc_opt.step()
        self.disc_opt.zero_grad()  # <- CAUSE

        s_loss = F.softplus(-self.disc(fake)).mean()
        s_loss.backward()
        self.student_opt.step()
        self.student_opt.zero_grad()  # <- CAUSE
        return d_loss.item(), s_loss.item()
