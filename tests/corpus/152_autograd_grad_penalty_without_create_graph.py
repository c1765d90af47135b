"""Case 152 - gradient-matching penalty built from autograd.grad without create_graph=True

Source: https://github.com/facebookresearch/DomainBed/issues/50 "IGA implementation"
        (algorithms.py IGA.update: per-environment `autograd.grad(env_loss, params,
        retain_graph=True)` and `autograd.grad(mean_loss, ...)` feed
        `penalty_value += (g - mean_g).pow(2).sum()`; "with the current implementation
        the penalty_value is useless in the training ... the lack of impact of the
        hyper-parameter self.hparams['penalty']"; fix: add create_graph)
Category: work that is thrown away (penalty term with no gradient)

Reported symptom:
    No error.  The inter-environment gradient penalty has no effect: results do not
    change with the penalty weight.  Backpropagating the penalty alone raises
    "element 0 of tensors does not require grad and does not have a grad_fn".

Root cause:
    torch.autograd.grad without create_graph=True returns gradients that are plain
    constants (no grad_fn).  The penalty computed from them is a constant, so
    `(mean_loss + weight * penalty).backward()` propagates only mean_loss.

Ground truth a good tool should report:
    `penalty` has requires_grad=False: it is built only from the outputs of
    torch.autograd.grad at lines 57 and 59, called without create_graph=True, and
    then added to the objective (line 65) that is backpropagated at line 67, so its
    weight has no effect on any parameter gradient.
    EXPECT: kind=penalty_without_create_graph; cause_line=57,59; created_line=65;
            backward_line=67

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        penalty = 0.9556 requires_grad=False
        parameter gradients identical for penalty weight 0 and 1000: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_env(shift, n=24):
    x = torch.randn(n, 6) + shift
    y = (x[:, 0] + 0.5 * x[:, 1] > shift).long()
    return x, y


def iga_update(penalty_weight):
    torch.manual_seed(0)
    network = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 2))
    params = list(network.parameters())
    optimizer = torch.optim.SGD(params, lr=0.1)
    environments = [make_env(0.0), make_env(1.0), make_env(-1.0)]

    total_loss, env_grads = 0.0, []
    for x, y in environments:
        env_loss = F.cross_entropy(network(x), y)
        total_loss = total_loss + env_loss
        env_grads.append(torch.autograd.grad(env_loss, params, retain_graph=True))  # <- CAUSE: no create_graph=True
    mean_loss = total_loss / len(environments)
    mean_grad = torch.autograd.grad(mean_loss, params, retain_graph=True)  # <- CAUSE: no create_graph=True

    penalty = 0.0
    for grads in env_grads:
        for g, mg in zip(grads, mean_grad):
            penalty = penalty + (g - mg).pow(2).sum()
    objective = mean_loss + penalty_weight * penalty  # <- CREATED: penalty is a constant here
    optimizer.zero_grad()
    objective.backward()
    optimizer.step()
    return penalty, [p.grad.clone() for p in params]


penalty, grads_without = iga_update(0.0)
_, grads_with = iga_update(1000.0)
print(f"penalty = {penalty.item():.4g} requires_grad={penalty.requires_grad}")
print("parameter gradients identical for penalty weight 0 and 1000:",
      all(torch.equal(a, b) for a, b in zip(grads_without, grads_with)))
