"""Case 906 - SAM optimizer with its two forward/backward passes (correct)

Source: https://github.com/davda54/sam/issues/8
        "you split the optimization into first and second step"
Category: correct (invariant 3)
EXPECT: no findings

Reported symptom:
    None. Sharpness-aware minimisation: one backward at w, a perturbation
    w + e(w), a second backward there, then the base optimizer steps at w.

Root cause:
    None. first_step() perturbs the weights under no_grad and clears the
    gradients; the second backward therefore holds only the gradient at
    w + e(w); second_step() restores w before the base step and clears again.
    Two backward passes per step and weights changed outside the optimizer are
    the algorithm, not a bug.

Ground truth a good tool should report:
    Nothing.
"""
import torch


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        defaults = dict(rho=rho, **kwargs)
        super().__init__(params, defaults)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)

    @torch.no_grad()
    def first_step(self):
        grad_norm = torch.norm(torch.stack([
            p.grad.norm(2) for group in self.param_groups for p in group["params"] if p.grad is not None
        ]), 2)
        for group in self.param_groups:
            scale = group["rho"] / (grad_norm + 1e-12)
            for p in group["params"]:
                if p.grad is None:
                    continue
                e_w = p.grad * scale
                p.add_(e_w)
                self.state[p]["e_w"] = e_w
        self.zero_grad()

    @torch.no_grad()
    def second_step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if "e_w" in self.state[p]:
                    p.sub_(self.state[p]["e_w"])
        self.base_optimizer.step()
        self.zero_grad()
