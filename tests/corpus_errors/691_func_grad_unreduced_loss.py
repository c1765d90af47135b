"""Case 691 - torch.func.grad of a loss computed with reduction="none"

Source: pytorch/pytorch test/functorch/test_eager_transforms.py, TestGradTransform (grad requires f to return a scalar Tensor; 'Maybe you wanted to use the vjp or jacrev APIs instead?')
Category: torch.func transforms

Reported symptom:
    RuntimeError: grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with 1 dims. Maybe you wanted to use the vjp or jacrev APIs instead?

Root cause:
    compute_loss uses functional_call + cross_entropy with reduction="none",
    so it returns one loss per example. torch.func.grad differentiates a
    scalar-valued function only; a vector output needs vjp/jacrev or a
    reduction.

Ground truth a good tool should report:
    `reduction="none"` in compute_loss (CAUSE) makes the transformed function
    non-scalar; grad(...) raises when called (ERROR). Use the mean reduction.
"""
import torch
import torch.nn as nn
from torch.func import functional_call, grad

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
params = {k: v.detach() for k, v in model.named_parameters()}


def compute_loss(params, x, y):
    logits = functional_call(model, params, (x,))
    return nn.functional.cross_entropy(logits, y, reduction="none")  # <- CAUSE


x = torch.randn(10, 6)
y = torch.randint(0, 3, (10,))
lr = 0.1
for step in range(3):
    grads = grad(compute_loss)(params, x, y)  # <- ERROR
    params = {k: params[k] - lr * grads[k] for k in params}
    print("step", step, compute_loss(params, x, y).mean().item())
