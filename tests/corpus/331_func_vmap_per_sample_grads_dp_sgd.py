"""Correct 331 - DP-SGD step with per-sample gradients from torch.func.vmap(grad(...)) and functional_call

Pattern: https://docs.pytorch.org/tutorials/intermediate/per_sample_grads.html
         ("Per-sample-gradients": functional_call + grad + vmap with
         in_dims=(None, 0, 0), parameters passed detached)
Category: correct (torch.func transforms)

What it does:
    Differentially-private SGD on a small MLP.  The parameters are passed to
    a pure loss function as a dict of detached tensors; vmap(grad(loss)) gives
    one gradient per sample, each is clipped to norm 1, the clipped gradients
    are summed, Gaussian noise is added, and the result is assigned to
    p.grad by hand before optimizer.step().  loss.backward() is never called;
    a check compares one per-sample gradient with the ordinary autograd
    gradient of that sample.

Why a naive tool might flag it:
    The loss is differentiated w.r.t. detached copies of the parameters,
    .grad is written directly, the model's own forward never builds a graph
    that reaches the parameters during training, tensors are batched by vmap.

Ground truth a good tool should report:
    Nothing.
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        per-sample grad matches autograd: True
        loss 0.7232 -> 0.4834
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
clip_norm, noise_mult = 1.0, 0.5

x = torch.randn(64, 12)
y = (x[:, 0] + x[:, 1] > 0).long()


def sample_loss(params, buffers, xi, yi):
    logits = functional_call(model, (params, buffers), (xi.unsqueeze(0),))
    return F.cross_entropy(logits, yi.unsqueeze(0))


per_sample_grads = vmap(grad(sample_loss), in_dims=(None, None, 0, 0))

params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}
g_all = per_sample_grads(params, buffers, x, y)
ref = torch.autograd.grad(F.cross_entropy(model(x[3:4]), y[3:4]), model[0].weight)[0]
print("per-sample grad matches autograd:", torch.allclose(g_all["0.weight"][3], ref, atol=1e-6))

for step in range(30):
    params = {k: v.detach() for k, v in model.named_parameters()}
    grads = per_sample_grads(params, buffers, x, y)
    norms = torch.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in grads.values()))
    factor = (clip_norm / (norms + 1e-6)).clamp(max=1.0)
    for name, p in model.named_parameters():
        clipped = (grads[name] * factor.view(-1, *[1] * (grads[name].dim() - 1))).sum(0)
        noise = torch.randn_like(clipped) * noise_mult * clip_norm
        p.grad = (clipped + noise) / len(x)
    optimizer.step()
    if step == 0:
        with torch.no_grad():
            first = F.cross_entropy(model(x), y).item()

with torch.no_grad():
    print(f"loss {first:.4f} -> {F.cross_entropy(model(x), y).item():.4f}")
