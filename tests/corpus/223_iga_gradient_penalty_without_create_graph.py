"""Case 223 - Inter-environment Gradient Alignment (IGA): the penalty on per-environment
gradients is built from autograd.grad results obtained without create_graph=True

Source: https://github.com/facebookresearch/DomainBed/issues/50 "IGA implementation"
        (autograd.grad(env_loss, params, retain_graph=True) without create_graph; the
        penalty term therefore never influences training; `(penalty_weight *
        penalty).backward()` alone raises "element 0 of tensors does not require grad",
        and changing the penalty hyper-parameter has no effect)
Category: silent wasted work (regulariser detached from the parameters)

Reported symptom:
    No error; the IGA penalty weight has no effect on the results.

Root cause:
    Without create_graph=True, torch.autograd.grad returns plain tensors with no
    history: the gradients are constants as far as autograd is concerned.  The
    penalty sum((g_env - g_mean)**2) is then a constant too, so
    mean_loss + w * penalty has exactly the gradient of mean_loss for any w.

Ground truth a good tool should report:
    The gradients returned at lines 56 and 58 do not require grad (no
    create_graph), so `penalty` (line 63) is constant and contributes nothing to
    objective.backward() at line 66.  Fix: create_graph=True in both calls.
    EXPECT: kind=penalty_detached; cause_line=56,58; penalty_line=63

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        step 0: loss=1.1629 penalty=2.67453 penalty.requires_grad=False max|grad -
          grad(mean_loss)|=0.0e+00
        step 1: loss=1.1049 penalty=1.29455 penalty.requires_grad=False max|grad -
          grad(mean_loss)|=0.0e+00
        step 2: loss=1.1016 penalty=2.35427 penalty.requires_grad=False max|grad -
          grad(mean_loss)|=0.0e+00
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import autograd

torch.manual_seed(0)


class IGA:
    def __init__(self, in_dim=10, n_classes=3, penalty_weight=1000.0):
        self.network = nn.Sequential(nn.Linear(in_dim, 32), nn.ReLU(), nn.Linear(32, n_classes))
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=1e-3)
        self.penalty_weight = penalty_weight

    def update(self, minibatches):
        params = list(self.network.parameters())
        total_loss, grads = 0.0, []
        for x, y in minibatches:
            env_loss = F.cross_entropy(self.network(x), y)
            total_loss = total_loss + env_loss
            grads.append(autograd.grad(env_loss, params, retain_graph=True))  # <- CAUSE: no create_graph
        mean_loss = total_loss / len(minibatches)
        mean_grad = autograd.grad(mean_loss, params, retain_graph=True)  # <- CAUSE: no create_graph

        penalty = 0.0
        for env_grads in grads:
            for g, mg in zip(env_grads, mean_grad):
                penalty = penalty + (g - mg).pow(2).sum()  # <- READ
        objective = mean_loss + self.penalty_weight * penalty
        self.optimizer.zero_grad()
        objective.backward()
        diff = max((p.grad - mg).abs().max().item() for p, mg in zip(params, mean_grad))
        self.optimizer.step()
        return mean_loss.item(), float(penalty), penalty.requires_grad, diff


algo = IGA()
for step in range(3):
    envs = [(torch.randn(16, 10) + shift, torch.randint(0, 3, (16,))) for shift in (-1.0, 0.0, 1.0)]
    loss, pen, pen_rg, diff = algo.update(envs)
    print(f"step {step}: loss={loss:.4f} penalty={pen:.5f} penalty.requires_grad={pen_rg} "
          f"max|grad - grad(mean_loss)|={diff:.1e}")
