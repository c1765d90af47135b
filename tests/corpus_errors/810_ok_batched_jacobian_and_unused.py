"""Case 810 - batched Jacobian with a correctly shaped basis; grads of unused params allowed

Source: pytorch/pytorch test/test_autograd.py, test_grad_batched_grad (is_grads_batched with [B, *output.shape] grad_outputs) and test_grad_unreachable (allow_unused=True)
Category: correct

Reported symptom:
    none: the script runs to completion without error or warning.

Root cause:
    No bug. The basis passed with is_grads_batched=True has shape
    [n_outputs, *actions.shape], so every batched grad_output matches the output.
    The parameter-gradient call includes an auxiliary head that forward does not
    use, and says so with allow_unused=True and materialize_grads=True, getting
    zeros for it.

Ground truth a good tool should report:
    Nothing.

EXPECT: no findings
"""
import torch
from torch import nn

torch.manual_seed(0)

policy = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 2))
aux_head = nn.Linear(16, 1)
states = torch.randn(4, 3, requires_grad=True)
actions = policy(states)

basis = torch.eye(2).unsqueeze(1).expand(2, 4, 2)
(jac,) = torch.autograd.grad(actions, states, grad_outputs=basis, is_grads_batched=True, retain_graph=True)
print("jacobian rows:", tuple(jac.shape))

params = [*policy.parameters(), *aux_head.parameters()]
grads = torch.autograd.grad(actions.pow(2).mean(), params, allow_unused=True, materialize_grads=True)
for p, g in zip(params, grads):
    assert g.shape == p.shape
print("aux head grad norm:", grads[-2].norm().item())
