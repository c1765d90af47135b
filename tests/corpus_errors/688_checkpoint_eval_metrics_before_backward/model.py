"""Case 688 - metrics pass switches the model to eval() between forward and backward

Source: pytorch/pytorch test/distributed/_composable/test_checkpoint.py, TestCheckpoint.test_checkpoint_kwargs (determinism_check="default" raises CheckpointError when recomputation differs)
Category: activation checkpointing (non-reentrant)

Reported symptom:
    torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: A different number of tensors was saved during the original forward and recomputation.

Root cause:
    The blocks are checkpointed with use_reentrant=False and contain dropout.
    Trainer.train_step computes the loss, then calls `_log_accuracy`, which puts
    the model in eval mode for an extra metrics forward and never switches it
    back before `loss.backward()`. The backward recomputes the checkpointed
    blocks in eval mode, where dropout saves no mask, so the recomputation
    saves fewer tensors than the original forward and checkpoint aborts.

Ground truth a good tool should report:
    `self.model.eval()` in Trainer._log_accuracy (CAUSE) changes the behaviour
    of the checkpointed blocks before their recomputation; restore train mode
    (or log after backward). Raised in `loss.backward()` in engine.py (ERROR).
"""
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self, dim, p=0.2):
        super().__init__()
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.drop = nn.Dropout(p)
        self.fc2 = nn.Linear(2 * dim, dim)

    def forward(self, x):
        return x + self.fc2(self.drop(self.fc1(x).relu()))


class Classifier(nn.Module):
    def __init__(self, dim=16, depth=3, classes=4):
        super().__init__()
        self.inp = nn.Linear(8, dim)
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            h = checkpoint(block, h, use_reentrant=False)
        return self.head(h)
