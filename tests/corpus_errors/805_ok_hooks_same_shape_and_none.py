"""Case 805 - gradient hook returning a same-shaped tensor, post-accumulate hook returning None

Source: pytorch/pytorch test/test_autograd.py, test_hooks (bw_hook_modify returns grad.mul(2)) and test_post_accumulate_grad_hook_e2e
Category: correct

Reported symptom:
    none: the script runs to completion without error or warning.

Root cause:
    No bug. The tensor hook on the hidden activation returns a clamped tensor of the
    same shape and dtype as the gradient it receives, which autograd accepts as the
    replacement gradient. The optimizer-in-backward hooks are registered on leaf
    parameters with register_post_accumulate_grad_hook, update the parameter in
    place under no_grad and return None.

Ground truth a good tool should report:
    Nothing.

EXPECT: no findings
"""
import torch
from torch import nn

torch.manual_seed(0)

fc1, fc2 = nn.Linear(6, 16), nn.Linear(16, 2)
params = [*fc1.parameters(), *fc2.parameters()]
optims = {p: torch.optim.SGD([p], lr=0.05) for p in params}


def step_in_backward(param):
    optims[param].step()
    optims[param].zero_grad()


for p in params:
    p.register_post_accumulate_grad_hook(step_in_backward)

x, y = torch.randn(10, 6), torch.randint(0, 2, (10,))
for step in range(3):
    h = torch.relu(fc1(x))
    h.register_hook(lambda g: g.clamp(-0.1, 0.1))
    loss = nn.functional.cross_entropy(fc2(h), y)
    loss.backward()
    print(f"step {step} loss {loss.item():.3f}")
