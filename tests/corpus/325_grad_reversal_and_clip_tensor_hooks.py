"""Correct 325 - domain-adversarial training with a gradient-reversal tensor hook and per-parameter clipping hooks

Pattern: https://docs.pytorch.org/docs/stable/generated/torch.Tensor.register_hook.html
         (a hook may return a new gradient that replaces `grad`; used for
         gradient reversal (DANN) and per-parameter gradient clamping)
Category: correct (tensor hooks that rewrite gradients)

What it does:
    A feature extractor feeds a label classifier and, through a gradient
    reversal, a domain discriminator.  The reversal is a hook registered on a
    fresh `feats.view_as(feats)` alias in every forward: it returns
    `-lambda * grad` (same shape), so the discriminator learns to tell the
    domains apart while the extractor learns to confuse it.  The
    discriminator's parameters carry hooks, registered once, that clamp their
    gradient to [-0.05, 0.05].  Each hook returns a new tensor of the same shape
    and dtype and never modifies its argument in place.

Why a naive tool might flag it:
    Hooks change the gradient that reaches parameters (sign flip, scaling,
    clamping), a hook is registered on a new non-leaf every iteration, and
    the discriminator loss *increases* the extractor's domain confusion by
    design.

Ground truth a good tool should report:
    Nothing.
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        task loss 1.1315 -> 0.0600
        max |grad| on discriminator params: 0.05
        reversal check: extractor grad from domain loss flips sign: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DANN(nn.Module):
    def __init__(self, lambd=0.3):
        super().__init__()
        self.lambd = lambd
        self.extractor = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU())
        self.classifier = nn.Linear(16, 3)
        self.discriminator = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x, reverse=True):
        feats = self.extractor(x)
        to_disc = feats.view_as(feats)
        if reverse and to_disc.requires_grad:
            lambd = self.lambd
            to_disc.register_hook(lambda grad: -lambd * grad)
        return self.classifier(feats), self.discriminator(to_disc).squeeze(-1)


model = DANN()
for p in model.discriminator.parameters():
    p.register_hook(lambda grad: grad.clamp(-0.05, 0.05))
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)

centers = torch.randn(3, 6)
src_y = torch.randint(0, 3, (48,))
src_x = centers[src_y] + 0.3 * torch.randn(48, 6)
tgt_x = centers[torch.randint(0, 3, (48,))] + 0.3 * torch.randn(48, 6) + 1.0   # shifted domain
domain = torch.cat([torch.zeros(48), torch.ones(48)])

for step in range(60):
    logits, _ = model(src_x)
    _, dom_logits = model(torch.cat([src_x, tgt_x]))
    task_loss = F.cross_entropy(logits, src_y)
    dom_loss = F.binary_cross_entropy_with_logits(dom_logits, domain)
    if step == 0:
        first = task_loss.item()
    optimizer.zero_grad()
    (task_loss + dom_loss).backward()
    optimizer.step()
print(f"task loss {first:.4f} -> {task_loss.item():.4f}")
print("max |grad| on discriminator params:",
      round(max(p.grad.abs().max().item() for p in model.discriminator.parameters()), 4))

# the extractor's gradient from the domain loss is the negated (scaled) plain gradient
w = model.extractor[0].weight
_, d_rev = model(tgt_x, reverse=True)
g_rev = torch.autograd.grad(F.binary_cross_entropy_with_logits(d_rev, torch.ones(48)), w)[0]
_, d_plain = model(tgt_x, reverse=False)
g_plain = torch.autograd.grad(F.binary_cross_entropy_with_logits(d_plain, torch.ones(48)), w)[0]
print("reversal check: extractor grad from domain loss flips sign:",
      torch.allclose(g_rev, -model.lambd * g_plain, atol=1e-6))
