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
import torch

from engine import Trainer
from model import Classifier

torch.manual_seed(0)

trainer = Trainer(Classifier())
x = torch.randn(32, 8)
y = torch.randint(0, 4, (32,))
for step in range(3):
    loss = trainer.train_step(x, y)
    print("step", step, "loss", round(loss, 4), "acc", trainer.history[-1])
