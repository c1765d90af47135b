"""Case 650 - checkpoint(context_fn=...) combined with use_reentrant=True

Source: pytorch/pytorch test/test_autograd.py, test_checkpointing_without_reentrant_with_context_fn (assertRaisesRegex "only supported when use_reentrant=False")
Category: checkpoint

Reported symptom:
    ValueError: Passing `context_fn` or `debug` is only supported when use_reentrant=False.

Root cause:
    The script wants to run the recomputation of a checkpointed block under a
    custom context (here autocast) and passes context_fn, but keeps the legacy
    use_reentrant=True implementation, which has no support for context_fn.

Ground truth a good tool should report:
    The checkpoint(...) call: use_reentrant must be False when context_fn is given.
"""
import contextlib

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)

block = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 16))
head = nn.Linear(16, 2)
opt = torch.optim.Adam([*block.parameters(), *head.parameters()], lr=1e-3)


def recompute_context():
    return contextlib.nullcontext(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=False)


x, y = torch.randn(8, 16, requires_grad=True), torch.randint(0, 2, (8,))
for step in range(2):
    h = checkpoint(block, x, use_reentrant=True, context_fn=recompute_context)  # <- CAUSE,ERROR
    loss = nn.functional.cross_entropy(head(h), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.3f}")
