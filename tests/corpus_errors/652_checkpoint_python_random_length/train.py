"""Case 652 - contrastive-style encoder training with activation checkpointing (entry point)

Source: pytorch/pytorch test/test_autograd.py, test_checkpoint_detects_non_determinism (assertRaisesRegex "tensors have different metadata")
Category: checkpoint

Reported symptom:
    torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: Recomputed values for the following tensors have different metadata than during the forward pass.

Root cause:
    data/augment.py draws the crop length with Python's `random`, which checkpoint
    does not replay, so the recomputed forward of CropEncoder._encode sees a
    different sequence length.

Ground truth a good tool should report:
    data/augment.py, the `keep = random.randint(...)` line; raised at loss.backward()
    below.
"""
import random

import torch

from encoder import CropEncoder

torch.manual_seed(0)
random.seed(0)

enc = CropEncoder()
opt = torch.optim.Adam(enc.parameters(), lr=1e-3)
tokens = torch.randn(4, 12, 16)
target = torch.randn(4, 16)

for step in range(3):
    loss = (enc(tokens) - target).pow(2).mean()
    opt.zero_grad()
    loss.backward()  # <- ERROR
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
