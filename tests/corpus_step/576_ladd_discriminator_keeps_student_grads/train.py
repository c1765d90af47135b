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

from ladd import LADDTrainer
from nets import Discriminator, Student

torch.manual_seed(0)

latents = torch.randn(512, 16)
student, disc = Student(16), Discriminator(16)
trainer = LADDTrainer(student, disc)

for it in range(25):
    idx = torch.randint(0, 512, (32,))
    d_loss, s_loss = trainer.train_step(latents[idx])

print(f"d {d_loss:.4f} s {s_loss:.4f}")
