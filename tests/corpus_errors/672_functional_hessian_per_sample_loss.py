"""Case 672 - Hessian of a loss that was left unreduced

Source: pytorch/pytorch test/test_autograd.py, test_hessian_err_check (assertRaisesRegex 'The Tensor returned by the function given to hessian should contain a single element')
Category: torch.autograd.functional

Reported symptom:
    RuntimeError: The Tensor returned by the function given to hessian should contain a single element

Root cause:
    For a Newton step on logistic-regression weights the user computes
    torch.autograd.functional.hessian(loss_fn, w), but loss_fn uses
    `reduction="none"` and returns one loss per sample. hessian is only defined
    for functions returning a single scalar.

Ground truth a good tool should report:
    `reduction="none"` in loss_fn (CAUSE) makes the function vector valued;
    hessian (ERROR) needs a scalar — use the mean (default) reduction.
"""
import torch
import torch.nn.functional as F
from torch.autograd.functional import hessian

torch.manual_seed(0)

X = torch.randn(64, 3)
true_w = torch.tensor([1.5, -2.0, 0.5])
y = (X @ true_w + 0.1 * torch.randn(64) > 0).float()


def loss_fn(w):
    logits = X @ w
    return F.binary_cross_entropy_with_logits(logits, y, reduction="none")  # <- CAUSE


w = torch.zeros(3)
for it in range(3):
    w_req = w.clone().requires_grad_()
    g, = torch.autograd.grad(loss_fn(w_req).mean(), w_req)
    H = hessian(loss_fn, w)  # <- ERROR
    w = w - torch.linalg.solve(H, g)
    print("iter", it, "w", w)
