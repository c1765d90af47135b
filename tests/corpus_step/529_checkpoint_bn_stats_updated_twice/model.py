"""Case 529 - activation checkpointing re-runs BatchNorm and updates its running stats twice

Source: https://github.com/pytorch/pytorch/issues/96136
        "the batch norm will be updated twice because the forward pass has to be ran twice"
Category: 7 - backward has no side effects on state

Reported symptom:
    Checkpointed and non-checkpointed runs with identical losses and gradients
    end with different BatchNorm running statistics; num_batches_tracked is twice
    the number of training steps and evaluation-mode results differ.

Root cause:
    Block.forward wraps a Linear+BatchNorm1d sub-network in
    torch.utils.checkpoint.checkpoint. During backward the checkpoint re-runs
    that forward in training mode, so BatchNorm updates running_mean,
    running_var and num_batches_tracked a second time - a state change made by
    backward itself.

Ground truth a good tool should report:
    backward() changes module buffers (bn.running_mean/var, num_batches_tracked
    incremented twice per step); the recomputation comes from the checkpoint
    call in model.py (the `checkpoint(self.body, x, use_reentrant=False)` line).
"""
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, dim), nn.BatchNorm1d(dim, momentum=0.1), nn.ReLU())

    def forward(self, x):
        return x + checkpoint(self.body, x, use_reentrant=False)  # <- CAUSE


class DeepNet(nn.Module):
    def __init__(self, d_in=10, dim=32, depth=3):
        super().__init__()
        self.inp = nn.Linear(d_in, dim)
        self.blocks = nn.Sequential(*[Block(dim) for _ in range(depth)])
        self.out = nn.Linear(dim, 1)

    def forward(self, x):
        return self.out(self.blocks(self.inp(x))).squeeze(-1)
