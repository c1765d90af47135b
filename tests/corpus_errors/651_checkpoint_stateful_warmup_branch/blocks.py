"""Case 651 - checkpointed block mutates a step counter inside forward (blocks module)

Source: pytorch/pytorch test/test_autograd.py, test_checkpoint_detects_non_determinism (assertRaisesRegex "A different number of tensors was saved")
Category: checkpoint

Reported symptom:
    torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: A different number of tensors was saved during the original forward and recomputation.

Root cause:
    WarmupBlock.forward increments self.calls and applies an extra smoothing op while
    calls <= warmup. The block runs under non-reentrant checkpoint, so its forward
    is executed a second time during backward; by then the counter has moved past
    the warmup, the branch is skipped and fewer tensors are saved than in the
    original forward.

Ground truth a good tool should report:
    The `self.calls += 1` line in WarmupBlock.forward: state that decides the graph
    must not change between forward and recomputation (update the counter outside
    the checkpointed forward, e.g. in the training loop). Raised at loss.backward()
    in train.py.
"""
import torch
from torch import nn


class WarmupBlock(nn.Module):
    def __init__(self, dim, warmup=1):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.warmup = warmup
        self.calls = 0

    def forward(self, x):
        self.calls += 1  # <- CAUSE: changes between forward and recomputation
        h = torch.tanh(self.fc(x))
        if self.calls <= self.warmup:
            h = h * torch.sigmoid(h)
        return x + h
