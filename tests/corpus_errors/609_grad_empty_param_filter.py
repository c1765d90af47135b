"""Case 609 - head-only gradient with a name filter that matches nothing

Source: pytorch/pytorch test/test_autograd.py, test_grad_empty_inputs (assertRaisesRegex ValueError "grad requires non-empty inputs.")
Category: backward-arguments

Reported symptom:
    RuntimeError: `inputs` argument to `grad()` cannot be empty.

Root cause:
    The parameters of the classification head are selected by name prefix "head.",
    but the Sequential names that submodule "classifier". The list comprehension is
    therefore empty and torch.autograd.grad is called with no inputs, which it
    refuses.

Ground truth a good tool should report:
    The `head_params = [...]` filter line selects no parameter (prefix should be
    "classifier."); the error is raised by the torch.autograd.grad call.
"""
from collections import OrderedDict

import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(
    OrderedDict(
        encoder=nn.Sequential(nn.Linear(12, 24), nn.GELU()),
        classifier=nn.Linear(24, 5),
    )
)
head_params = [p for n, p in model.named_parameters() if n.startswith("head.")]  # <- CAUSE

x, y = torch.randn(20, 12), torch.randint(0, 5, (20,))
for step in range(3):
    loss = F.cross_entropy(model(x), y)
    grads = torch.autograd.grad(loss, head_params)  # <- ERROR
    with torch.no_grad():
        for p, g in zip(head_params, grads):
            p -= 0.1 * g
    print(f"step {step} loss {loss.item():.3f}")
