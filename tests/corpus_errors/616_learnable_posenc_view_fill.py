"""Case 616 - learnable positional table made requires_grad before it is filled through views

Source: pytorch/pytorch test/test_autograd.py, test_no_requires_grad_inplace (the "should fail if requires_grad = True when we modify inplace" view case)
Category: in-place

Reported symptom:
    RuntimeError: a view of a leaf Variable that requires grad is being used in an in-place operation.

Root cause:
    The sinusoidal table is initialised through two strided views (`even`, `odd`)
    taken before the table is turned into a trainable leaf. requires_grad_(True) is
    called too early: the subsequent copy_ into the views is an in-place write to a
    view of a leaf that now requires grad.

Ground truth a good tool should report:
    The `table.requires_grad_(True)` line: make the table trainable only after it
    has been filled (or fill it under torch.no_grad()). The error is raised at the
    first `even.copy_(...)`.
"""
import math

import torch
from torch import nn

torch.manual_seed(0)

max_len, d_model = 32, 16
position = torch.arange(max_len).unsqueeze(1).float()
freq = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))

table = torch.zeros(max_len, d_model)
even = table[:, 0::2]
odd = table[:, 1::2]
table.requires_grad_(True)  # <- CAUSE: too early
even.copy_(torch.sin(position * freq))  # <- ERROR
odd.copy_(torch.cos(position * freq))

proj = nn.Linear(d_model, 4)
opt = torch.optim.Adam([table, *proj.parameters()], lr=1e-2)
tokens = torch.randn(4, max_len, d_model)
for step in range(3):
    loss = proj(tokens + table).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
