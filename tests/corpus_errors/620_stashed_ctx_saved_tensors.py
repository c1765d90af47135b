"""Case 620 - reading saved_tensors of a stashed ctx after backward already ran

Source: pytorch/pytorch test/test_autograd.py, test_naughty_autograd_function_stashing_ctx (assertRaises RuntimeError on saved_ctx[0].saved_tensors)
Category: graph-freed

Reported symptom:
    RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.

Root cause:
    For debugging, the custom Function keeps a class-level reference to its ctx and
    the training loop later reads ctx.saved_tensors to inspect what forward saved.
    By then loss.backward() has run and released the saved tensors of that node,
    so unpacking them raises the "freed" error.

Ground truth a good tool should report:
    The debug line reading `TracedGELU.last_ctx.saved_tensors` after backward;
    keep a detached copy of what is needed in forward instead (the ctx stash is
    where the stale reference comes from).
"""
import math

import torch
from torch import nn

torch.manual_seed(0)


class TracedGELU(torch.autograd.Function):
    last_ctx = None

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        TracedGELU.last_ctx = ctx  # <- SAVED
        return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        cdf = 0.5 * (1 + torch.erf(x / math.sqrt(2)))
        pdf = torch.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
        return grad_out * (cdf + x * pdf)


fc1, fc2 = nn.Linear(6, 12), nn.Linear(12, 1)
opt = torch.optim.SGD([*fc1.parameters(), *fc2.parameters()], lr=0.05)
x, y = torch.randn(10, 6), torch.randn(10, 1)

for step in range(2):
    pred = fc2(TracedGELU.apply(fc1(x)))
    loss = (pred - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    (pre_act,) = TracedGELU.last_ctx.saved_tensors  # <- CAUSE,ERROR
    print(f"step {step} loss {loss.item():.3f} pre-activation mean {pre_act.mean().item():.3f}")
