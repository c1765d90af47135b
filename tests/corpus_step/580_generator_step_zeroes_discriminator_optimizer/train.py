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

from gan import GAN

torch.manual_seed(0)

angle = torch.rand(1024) * 6.2832
data = torch.stack([angle.cos(), angle.sin()], dim=1) + 0.05 * torch.randn(1024, 2)

gan = GAN(z_dim=4)
for it in range(30):
    batch = data[torch.randint(0, 1024, (64,))]
    logs = gan.train_step(batch)

print({k: round(v, 4) for k, v in logs.items()})
