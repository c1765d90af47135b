"""Case 696 - vjp_fn called with one cotangent for a function returning two outputs

Source: pytorch/pytorch test/functorch/test_eager_transforms.py, TestGradTransform.test_vjp_pytree_error (assertRaisesRegex 'Expected pytree structure')
Category: torch.func transforms

Reported symptom:
    RuntimeError: Expected pytree structure of cotangents to be the same as pytree structure of outputs to the function. cotangents: *, primal output: (*, *)

Root cause:
    The encoder returns a tuple (mean, log_var). torch.func.vjp therefore
    expects a cotangent with the same structure, one tensor per output. The
    user passes only the gradient for `mean`, which does not match the (mean,
    log_var) pytree.

Ground truth a good tool should report:
    The vjp_fn call (CAUSE/ERROR) passes a single tensor where a tuple of two
    cotangents is required, e.g. vjp_fn((g_mean, torch.zeros_like(log_var))).
"""
import torch
import torch.nn as nn
from torch.func import vjp

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
        self.mu = nn.Linear(16, 2)
        self.log_var = nn.Linear(16, 2)

    def forward(self, x):
        h = self.body(x)
        return self.mu(h), self.log_var(h)


enc = Encoder()
x = torch.randn(5, 6)
(mean, log_var), vjp_fn = vjp(enc, x)
g_mean = torch.ones_like(mean)
(input_sensitivity,) = vjp_fn(g_mean)  # <- CAUSE,ERROR
print("sensitivity", input_sensitivity.shape)
