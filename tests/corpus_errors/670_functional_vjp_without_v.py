"""Case 670 - autograd.functional.vjp on a vector-valued model without a vector v

Source: pytorch/pytorch test/test_autograd.py, test_vjp_err_check (assertRaisesRegex 'The vector v can only be None if the user-provided function returns')
Category: torch.autograd.functional

Reported symptom:
    RuntimeError: The vector v can only be None if the user-provided function returns a single Tensor with a single element.

Root cause:
    The user wants input sensitivities of a regression model and calls
    `torch.autograd.functional.vjp(predict, x)` without the vector `v`. The
    function returns one prediction per sample (shape [8]), so there is no
    implicit all-ones seed: v may only be omitted for scalar outputs.

Ground truth a good tool should report:
    The vjp call (CAUSE/ERROR) omits `v` although `predict` returns a
    non-scalar tensor; pass `v=torch.ones(8)` or reduce the output.
"""
import torch
import torch.nn as nn
from torch.autograd.functional import vjp

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
x = torch.randn(8, 5)
y = x[:, :1] * 2.0

for _ in range(20):
    opt.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    opt.step()


def predict(inp):
    return model(inp).squeeze(-1)


preds, saliency = vjp(predict, x)  # <- CAUSE,ERROR
print("mean |d pred / d x|:", saliency.abs().mean(0))
