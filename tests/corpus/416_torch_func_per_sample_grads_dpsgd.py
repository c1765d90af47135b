"""Clean 416 - DP-SGD style training with per-sample gradients from
torch.func.vmap(torch.func.grad(...)) over functional_call, clipped, noised and
applied by hand under torch.no_grad()

What it does:
    The parameters are detached into a dict and a per-sample loss function is built
    with torch.func.functional_call; vmap(grad(loss), in_dims=(None, 0, 0)) gives one
    gradient per example.  Each per-sample gradient is clipped to norm C, the batch
    sum gets Gaussian noise, and the mean is written to p.grad before a regular
    optimizer.step().  loss.backward() is never called.

Why it is correct (not a bug):
    torch.func transforms compute gradients functionally: they do not populate .grad
    and do not need the module's parameters to be part of an autograd graph, so
    detaching them is intended, and the absence of backward() is not a missing step.
    p.grad is assigned (not accumulated) every iteration, so there is nothing to zero,
    and the optimizer reads exactly these gradients.  The loss printed for monitoring
    is computed under no_grad.
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        step 0: full-data loss=0.9723 median per-sample grad norm=2.448
        step 1: full-data loss=0.9137 median per-sample grad norm=2.637
        step 2: full-data loss=0.8599 median per-sample grad norm=2.486
        step 3: full-data loss=0.8120 median per-sample grad norm=2.435
        step 4: full-data loss=0.7570 median per-sample grad norm=2.292
        step 5: full-data loss=0.7193 median per-sample grad norm=2.083
        step 6: full-data loss=0.6795 median per-sample grad norm=2.406
        step 7: full-data loss=0.6495 median per-sample grad norm=2.030
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

torch.manual_seed(0)
CLIP, NOISE_MULT, BATCH = 1.0, 0.5, 32

model = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
w_true = torch.randn(10, 3)
data = torch.randn(256, 10)
targets = (data @ w_true).argmax(1)


def sample_loss(params, x, y):
    logits = functional_call(model, params, (x.unsqueeze(0),))
    return F.cross_entropy(logits, y.unsqueeze(0))


per_sample_grads = vmap(grad(sample_loss), in_dims=(None, 0, 0))

for step in range(8):
    idx = torch.randint(0, 256, (BATCH,))
    x, y = data[idx], targets[idx]
    params = {k: v.detach() for k, v in model.named_parameters()}
    grads = per_sample_grads(params, x, y)  # each value: (BATCH, *param.shape)
    norms = torch.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in grads.values()))
    factor = (CLIP / (norms + 1e-6)).clamp(max=1.0)
    with torch.no_grad():
        for name, p in model.named_parameters():
            g = (grads[name] * factor.view(-1, *[1] * (grads[name].dim() - 1))).sum(0)
            p.grad = (g + NOISE_MULT * CLIP * torch.randn_like(g)) / BATCH
    optimizer.step()
    with torch.no_grad():
        loss = F.cross_entropy(model(data), targets)
    print(f"step {step}: full-data loss={loss.item():.4f} median per-sample grad norm={norms.median().item():.3f}")
