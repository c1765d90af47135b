"""Case 370 - correct: BYOL-style training, targets from an EMA copy evaluated under no_grad

Source: https://github.com/lucidrains/byol-pytorch (target encoder = EMA of
        the online encoder, its projections computed under `torch.no_grad()`
        and detached); Grill et al. 2020, "Bootstrap Your Own Latent"
Category: correct code a naive tool flags (target produced by another model's forward)

What the code does:
    An online encoder + projector + predictor is trained to predict, from one
    noisy view, the projection that a target network produces from another
    view.  The target network is a `copy.deepcopy` of the online network with
    `requires_grad_(False)`, evaluated under `torch.no_grad()`, and updated
    after every step as an exponential moving average of the online weights
    (`lerp_` in place, under no_grad).  The loss is symmetrised over the two
    views.

Why a naive tool might flag it:
    The regression target comes out of a model forward; a whole model's
    parameters are never optimised but change every step (in-place EMA on
    leaves); in-place writes to tensors that were used in an earlier forward.

Ground truth a good tool should report:
    Nothing: the target is a constant for each step by design, and the EMA
    update happens after backward, outside any graph.
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        step  0 loss 4.1758
        step 39 loss 0.1513
        target differs from online by at most 0.0405; target params require grad: False
"""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def mlp(n_in, n_hidden, n_out):
    return nn.Sequential(nn.Linear(n_in, n_hidden), nn.BatchNorm1d(n_hidden), nn.ReLU(),
                         nn.Linear(n_hidden, n_out))


online = nn.Sequential(mlp(12, 32, 16), mlp(16, 32, 8))  # encoder + projector
predictor = mlp(8, 32, 8)
target = copy.deepcopy(online).requires_grad_(False)
optimizer = torch.optim.Adam(list(online.parameters()) + list(predictor.parameters()), lr=3e-3)
tau = 0.95
data = torch.randn(64, 12)


def regression_loss(p, z):
    return 2 - 2 * F.cosine_similarity(p, z, dim=-1).mean()


for step in range(40):
    view1 = data + 0.1 * torch.randn_like(data)
    view2 = data * (1 + 0.1 * torch.randn_like(data))
    with torch.no_grad():
        z1, z2 = target(view1), target(view2)
    loss = regression_loss(predictor(online(view1)), z2) + regression_loss(predictor(online(view2)), z1)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        for p_t, p_o in zip(target.parameters(), online.parameters()):
            p_t.lerp_(p_o, 1 - tau)
    if step in (0, 39):
        print(f"step {step:2d} loss {loss.item():.4f}")

gap = max((p_t - p_o).abs().max().item() for p_t, p_o in zip(target.parameters(), online.parameters()))
print(f"target differs from online by at most {gap:.4f}; target params require grad:",
      any(p.requires_grad for p in target.parameters()))
