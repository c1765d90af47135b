"""Case 227 - BYOL trainer: optimizer.zero_grad() sits between backward() and step()

Source: https://github.com/lucidrains/byol-pytorch/issues/93 "[BUG] in trainer.py"
        ("I don't think you can set the gradients to zero right before stepping the
        optimizer"; acknowledged and fixed by the maintainer)
Category: training-step protocol (gradients cleared before they are used)

Reported symptom:
    No error, the loss is printed every step, but the online network does not learn.

Root cause:
    The order is backward -> zero_grad -> step.  zero_grad() (set_to_none=True by
    default) discards the gradients that backward just accumulated, so step() finds
    p.grad is None for every parameter and skips them.  The EMA target is updated from
    an online network that never changes, so it stays at its initial copy as well.

Ground truth a good tool should report:
    Gradients written by loss.backward() at line 80 are cleared by
    optimizer.zero_grad() at line 81 before optimizer.step() at line 82 reads
    them; no parameter changes.  Fix: zero_grad before the forward/backward (or after
    step).
    EXPECT: kind=zero_grad_before_step; cause_line=81; backward_line=80; step_line=82

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        step 0: loss=3.8329
        step 1: loss=3.5933
        step 2: loss=3.4073
        step 3: loss=3.5154
        step 4: loss=3.4658
        step 5: loss=3.5491
        online encoder changed: False
"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def mlp(i, h, o):
    return nn.Sequential(nn.Linear(i, h), nn.BatchNorm1d(h), nn.ReLU(), nn.Linear(h, o))


class BYOL(nn.Module):
    def __init__(self, dim=20, proj=16, decay=0.99):
        super().__init__()
        self.online = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), mlp(32, 32, proj))
        self.predictor = mlp(proj, 32, proj)
        self.target = copy.deepcopy(self.online).requires_grad_(False)
        self.decay = decay

    def loss_fn(self, p, z):
        return 2 - 2 * F.cosine_similarity(p, z.detach(), dim=-1).mean()

    def forward(self, x):
        v1, v2 = x + 0.1 * torch.randn_like(x), x * (1 + 0.1 * torch.randn_like(x))
        p1, p2 = self.predictor(self.online(v1)), self.predictor(self.online(v2))
        with torch.no_grad():
            z1, z2 = self.target(v1), self.target(v2)
        return self.loss_fn(p1, z2) + self.loss_fn(p2, z1)

    @torch.no_grad()
    def update_target(self):
        for t, o in zip(self.target.parameters(), self.online.parameters()):
            t.lerp_(o, 1 - self.decay)


byol = BYOL()
optimizer = torch.optim.Adam(list(byol.online.parameters()) + list(byol.predictor.parameters()), lr=3e-3)
w0 = byol.online[0].weight.detach().clone()
data = torch.randn(256, 20)

for step in range(6):
    batch = data[torch.randint(0, 256, (32,))]
    loss = byol(batch)
    loss.backward()
    optimizer.zero_grad()  # <- CAUSE: clears the gradients computed just above
    optimizer.step()
    byol.update_target()
    print(f"step {step}: loss={loss.item():.4f}")

print("online encoder changed:", not torch.equal(w0, byol.online[0].weight))
