"""Case 698 - per-sample loss function calls .item() under vmap(grad(...))

Source: pytorch/pytorch test/functorch/test_eager_transforms.py (vmap: .item() on a batched tensor is unsupported)
Category: torch.func transforms

Reported symptom:
    RuntimeError: vmap: It looks like you're either (1) calling .item() on a Tensor or (2) attempting to use a Tensor in some data-dependent control flow or (3) encountering this error in PyTorch internals. For (1): we don't support vmap over calling .item() on a Tensor, please try to rewrite what you're doing with other operations. For (2): we don't support data-dependent control flow in vmap yet, please file an issue at https://github.com/pytorch/pytorch/issues . For (3): please file an issue.

Root cause:
    To skip outliers the per-example loss checks `if loss.item() > 10` before
    returning. Under vmap every example is processed in one batched call, so a
    per-example Python scalar does not exist and .item() is rejected.

Ground truth a good tool should report:
    The `loss.item()` data-dependent branch (CAUSE/ERROR) inside the
    vmapped function; use torch.where / clamp instead.
"""
import torch
import torch.nn as nn
from torch.func import functional_call, grad, vmap

torch.manual_seed(0)

model = nn.Linear(5, 1)
params = {k: v.detach() for k, v in model.named_parameters()}


def example_loss(p, x, y):
    pred = functional_call(model, p, (x.unsqueeze(0),)).squeeze()
    loss = (pred - y) ** 2
    if loss.item() > 10.0:  # <- CAUSE,ERROR
        loss = loss * 0.0
    return loss


x = torch.randn(12, 5)
y = torch.randn(12)
per_sample = vmap(grad(example_loss), in_dims=(None, 0, 0))(params, x, y)
print({k: v.shape for k, v in per_sample.items()})
