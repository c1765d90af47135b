"""Case 693 - objective passed to torch.func.grad returns a Python float

Source: pytorch/pytorch test/functorch/test_eager_transforms.py, TestGradTransform (grad_and_value checks that f returns a Tensor)
Category: torch.func transforms

Reported symptom:
    RuntimeError: grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got <class 'float'>

Root cause:
    The energy function ends with `.item()` so that it can also be used for
    logging. Under torch.func.grad the function must return a (scalar) Tensor
    to be differentiated; a Python float has no gradient.

Ground truth a good tool should report:
    `return energy.item()` (CAUSE) converts the objective to a float; return
    the tensor. The grad call raises (ERROR).
"""
import torch
from torch.func import grad

torch.manual_seed(0)

positions = torch.randn(5, 2)


def energy(pos):
    diff = pos.unsqueeze(0) - pos.unsqueeze(1)
    dist2 = (diff ** 2).sum(-1) + torch.eye(pos.shape[0])
    energy = (1.0 / dist2).triu(1).sum() + 0.05 * (pos ** 2).sum()
    return energy.item()  # <- CAUSE


for it in range(5):
    force = -grad(energy)(positions)  # <- ERROR
    positions = positions + 0.01 * force
    print("iter", it, "energy", energy(positions))
