"""Case 651 - activation checkpointing of a block with a warm-up branch (entry point)

Source: pytorch/pytorch test/test_autograd.py, test_checkpoint_detects_non_determinism (assertRaisesRegex "A different number of tensors was saved")
Category: checkpoint

Reported symptom:
    torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: A different number of tensors was saved during the original forward and recomputation.

Root cause:
    blocks.py, WarmupBlock.forward bumps a call counter that selects a branch, so the
    recomputation done by checkpoint during backward takes a different path than
    the original forward.

Ground truth a good tool should report:
    blocks.py, the `self.calls += 1` line of WarmupBlock.forward; raised at
    loss.backward() below.
"""
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from blocks import WarmupBlock

torch.manual_seed(0)

block = WarmupBlock(12)
head = nn.Linear(12, 1)
opt = torch.optim.SGD([*block.parameters(), *head.parameters()], lr=0.05)
x, y = torch.randn(10, 12), torch.randn(10, 1)

for step in range(3):
    h = checkpoint(block, x, use_reentrant=False)
    loss = nn.functional.mse_loss(head(h), y)
    opt.zero_grad()
    loss.backward()  # <- ERROR
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
