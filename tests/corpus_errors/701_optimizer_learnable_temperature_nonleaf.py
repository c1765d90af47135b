"""Case 701 - learnable temperature created as an expression, then given to the optimizer

Source: pytorch/pytorch test/test_optim.py / test/optim/test_optim.py (Optimizer.add_param_group rejects non-leaf tensors: "can't optimize a non-leaf Tensor")
Category: optimizer construction

Reported symptom:
    ValueError: can't optimize a non-leaf Tensor

Root cause:
    The CLIP-style logit scale is initialised as
    `torch.ones([], requires_grad=True) * math.log(1 / 0.07)`. The
    multiplication produces a non-leaf tensor (it has a grad_fn); its .grad is
    never populated and the optimizer refuses to own it.

Ground truth a good tool should report:
    The logit_scale initialisation (CAUSE) creates a non-leaf; build it as a
    leaf (nn.Parameter(torch.tensor(math.log(1/0.07)))). Raised by the
    optimizer constructor (ERROR).
"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)

image_proj = nn.Linear(32, 16)
text_proj = nn.Linear(24, 16)
logit_scale = torch.ones([], requires_grad=True) * math.log(1 / 0.07)  # <- CAUSE

params = [*image_proj.parameters(), *text_proj.parameters(), logit_scale]
opt = torch.optim.AdamW(params, lr=1e-3)  # <- ERROR

img, txt = torch.randn(8, 32), torch.randn(8, 24)
for step in range(3):
    opt.zero_grad()
    a = nn.functional.normalize(image_proj(img), dim=-1)
    b = nn.functional.normalize(text_proj(txt), dim=-1)
    logits = logit_scale.exp() * a @ b.t()
    labels = torch.arange(8)
    loss = (nn.functional.cross_entropy(logits, labels) + nn.functional.cross_entropy(logits.t(), labels)) / 2
    loss.backward()
    opt.step()
    print("step", step, loss.item())
