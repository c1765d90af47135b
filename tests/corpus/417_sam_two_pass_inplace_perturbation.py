"""Clean 417 - Sharpness-Aware Minimization: two forward/backward passes per step, the
weights perturbed in place under no_grad and restored before the base optimizer step

What it does:
    A small SAM wrapper: first_step() computes e_w = rho * g / ||g|| for every
    parameter, adds it to the weights in place (under torch.no_grad()) and remembers
    it; the gradient is then recomputed at the perturbed point; second_step()
    subtracts e_w again and calls the base optimizer (SGD with momentum) with the
    second gradient.  zero_grad() is called between the two passes.

Why it is correct (not a bug):
    The first graph has already been consumed by its backward when the weights are
    modified in place, and the second forward is recorded after the perturbation, so
    no saved tensor is stale when the second backward runs.  Restoring the weights
    after that backward (again in place, under no_grad) leaves the freed graph
    untouched.  Two backward calls per step on two separate graphs need no
    retain_graph, and the base optimizer steps once per batch with the SAM gradient.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        step 0: loss=1.4270 loss at w+e=1.4915
        step 1: loss=1.3104 loss at w+e=1.3732
        step 2: loss=1.3313 loss at w+e=1.4026
        step 3: loss=1.2059 loss at w+e=1.2610
        step 4: loss=1.3944 loss at w+e=1.4813
        step 5: loss=1.1094 loss at w+e=1.1677
        step 6: loss=0.8766 loss at w+e=0.9283
        step 7: loss=0.8004 loss at w+e=0.8447
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SAM:
    def __init__(self, params, base_cls, rho=0.05, **kwargs):
        self.params = [p for p in params if p.requires_grad]
        self.base = base_cls(self.params, **kwargs)
        self.rho, self.e_w = rho, {}

    def zero_grad(self):
        self.base.zero_grad()

    @torch.no_grad()
    def first_step(self):
        grad_norm = torch.norm(torch.stack([p.grad.norm(2) for p in self.params if p.grad is not None]), 2)
        scale = self.rho / (grad_norm + 1e-12)
        for p in self.params:
            if p.grad is None:
                continue
            self.e_w[p] = p.grad * scale
            p.add_(self.e_w[p])  # climb to the local worst case

    @torch.no_grad()
    def second_step(self):
        for p, e in self.e_w.items():
            p.sub_(e)  # back to the original weights
        self.e_w.clear()
        self.base.step()  # update with the gradient taken at w + e(w)


model = nn.Sequential(nn.Linear(20, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 4))
sam = SAM(model.parameters(), torch.optim.SGD, rho=0.05, lr=0.1, momentum=0.9)
w = torch.randn(20, 4)
x_all = torch.randn(256, 20)
y_all = (x_all @ w).argmax(1)

for step in range(8):
    idx = torch.randint(0, 256, (32,))
    x, y = x_all[idx], y_all[idx]
    loss = F.cross_entropy(model(x), y)
    sam.zero_grad()
    loss.backward()
    sam.first_step()
    sam.zero_grad()
    perturbed_loss = F.cross_entropy(model(x), y)
    perturbed_loss.backward()
    sam.second_step()
    print(f"step {step}: loss={loss.item():.4f} loss at w+e={perturbed_loss.item():.4f}")
