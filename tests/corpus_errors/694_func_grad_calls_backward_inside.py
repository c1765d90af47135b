"""Case 694 - calling loss.backward() inside a function transformed by torch.func.grad

Source: pytorch/pytorch test/functorch/test_eager_transforms.py (backward() inside a functorch transform is rejected; use grad/vjp instead)
Category: torch.func transforms

Reported symptom:
    RuntimeError: backward() called inside a functorch transform. This is not supported, please use functorch.grad or functorch.vjp instead or call backward() outside of functorch transforms.

Root cause:
    In a MAML-style inner loop the user wraps a function with torch.func.grad
    but, inside it, still performs the classic `loss.backward()` to obtain the
    inner gradients. The autograd tape cannot be driven with .backward() while
    a functorch transform is active.

Ground truth a good tool should report:
    The `loss.backward()` inside inner_loss (CAUSE/ERROR) must be replaced by
    torch.func.grad (or torch.autograd.grad with create_graph=True).
"""
import torch
import torch.nn as nn
from torch.func import functional_call, grad

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 1))
params = {k: v.detach() for k, v in model.named_parameters()}


def inner_loss(params, x, y):
    loss = nn.functional.mse_loss(functional_call(model, params, (x,)), y)
    loss.backward()  # <- CAUSE,ERROR
    return loss


def adapt(params, x, y, lr=0.01):
    g = grad(inner_loss)(params, x, y)
    return {k: params[k] - lr * g[k] for k in params}


x = torch.linspace(-2, 2, 20).unsqueeze(1)
y = torch.sin(2 * x)
fast = adapt(params, x, y)
print("adapted loss", nn.functional.mse_loss(functional_call(model, fast, (x,)), y).item())
