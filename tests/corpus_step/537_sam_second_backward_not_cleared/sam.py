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


class SAMStepper:
    def __init__(self, model, criterion, base_optimizer, rho=0.05):
        self.model, self.criterion = model, criterion
        self.base_optimizer, self.rho = base_optimizer, rho

    def step(self, x, y):
        loss = self.criterion(self.model(x), y)
        loss.backward()
        params = [p for p in self.model.parameters() if p.grad is not None]
        with torch.no_grad():
            grad_norm = torch.norm(torch.stack([p.grad.norm(2) for p in params]), 2)
            e_ws = [p.grad * (self.rho / (grad_norm + 1e-12)) for p in params]
            for p, e_w in zip(params, e_ws):
                p.add_(e_w)
        self.criterion(self.model(x), y).backward()  # <- CAUSE
        with torch.no_grad():
            for p, e_w in zip(params, e_ws):
                p.sub_(e_w)
        self.base_optimizer.step()
        self.base_optimizer.zero_grad()
        return loss.item()
