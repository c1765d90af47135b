"""Case 537 - SAM's second backward is added on top of the first gradient

Source: https://github.com/rollovd/LookSAM/issues/3
        "So my point is that there should be a `zero_grad()` before the 2nd backward."
Category: 3 - a step consumes exactly the gradients meant for it

Reported symptom:
    The sharpness-aware optimizer trains, but behaves like plain SGD with a
    doubled, biased learning rate rather than SAM; gradient norms at the update
    are about twice those of the first pass.

Root cause:
    SAMStepper.step() computes the gradient at w, perturbs the weights to
    w + e(w) and runs the second backward without clearing the first gradient.
    The base optimizer then applies g(w) + g(w + e(w)) instead of g(w + e(w)):
    the step consumes gradients that were meant only to build the perturbation.

Ground truth a good tool should report:
    The base optimizer step consumes the gradients of two backward passes (the
    one at w and the one at w + e); the second backward in sam.py (the
    `self.criterion(self.model(x), y).backward()` line) must be preceded by
    zero_grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from sam import SAMStepper

torch.manual_seed(0)

x = torch.randn(512, 10)
y = (x[:, :3].sum(1) + 0.5 * x[:, 3] * x[:, 4] > 0).long()

model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))
base = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
stepper = SAMStepper(model, F.cross_entropy, base)

for step in range(30):
    idx = torch.randint(0, 512, (64,))
    loss = stepper.step(x[idx], y[idx])

print(f"final loss {loss:.4f}")
