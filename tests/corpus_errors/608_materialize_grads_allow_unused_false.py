"""Case 608 - per-expert gradient norms with materialize_grads and allow_unused=False

Source: pytorch/pytorch test/test_autograd.py, test_grad_materialize_grads (assertRaisesRegex ValueError "Expected allow_unused to be True or not passed when")
Category: backward-arguments

Reported symptom:
    ValueError: Expected allow_unused to be True or not passed when materialize_grads=True, but got: allow_unused=False.

Root cause:
    To log a gradient norm for every expert (including experts the router skipped),
    the script asks torch.autograd.grad for materialize_grads=True so unused experts
    get zero tensors, but it also passes allow_unused=False explicitly. The two
    options contradict each other and torch.autograd.grad rejects the call.

Ground truth a good tool should report:
    The torch.autograd.grad call: drop allow_unused=False (materialize_grads=True
    implies allow_unused=True).
"""
import torch
from torch import nn

torch.manual_seed(0)

experts = nn.ModuleList([nn.Linear(8, 8) for _ in range(4)])
router = nn.Linear(8, 4)
x = torch.randn(16, 8)

scores = router(x)
chosen = scores.argmax(dim=1)
out = torch.zeros(16, 8)
for e in chosen.unique().tolist():
    rows = chosen == e
    out[rows] = experts[e](x[rows]) * scores[rows, e:e + 1].sigmoid()
loss = out.pow(2).mean()

expert_params = [p for ex in experts for p in ex.parameters()]
grads = torch.autograd.grad(loss, expert_params, allow_unused=False, materialize_grads=True)  # <- CAUSE,ERROR
for i in range(4):
    print(f"expert {i} grad norm {grads[2 * i].norm().item():.4f}")
