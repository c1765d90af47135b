"""Case 526 - pruning speed-up swaps in smaller layers after the optimizer was built

Source: https://github.com/microsoft/nni/issues/4521
        "So the parameters registered in the optimizer are outdated."
Category: 6 - structure (registration, sharing, replacement)

Reported symptom:
    After pruning and model speed-up, fine-tuning does not improve the model at
    all: the parameters of the pruned model are not updated.

Root cause:
    Finetuner.__init__ creates the optimizer and then runs the pruner's speedup,
    which replaces fc1/fc2 with new, smaller nn.Linear modules (copying the kept
    rows/columns). The optimizer still references the parameters of the removed
    modules; the new modules receive gradients that no optimizer applies.

Ground truth a good tool should report:
    Submodules fc1 and fc2 were replaced after the optimizer was built: their new
    parameters get gradients but are in no optimizer, while the optimizer holds
    parameters no longer in the model. The speed-up runs after optimizer creation
    in trainer.py (the `self.pruner.speedup(self.model)` line; the optimizer made
    just above must be built after it).
"""
import torch
import torch.nn as nn


class ChannelPruner:
    def __init__(self, sparsity=0.5):
        self.sparsity = sparsity

    def speedup(self, model):
        """Drop the hidden units of fc1 with the smallest weight norm."""
        keep = int(model.fc1.out_features * (1 - self.sparsity))
        idx = model.fc1.weight.norm(dim=1).argsort(descending=True)[:keep]
        new_fc1 = nn.Linear(model.fc1.in_features, keep)
        new_fc2 = nn.Linear(keep, model.fc2.out_features)
        with torch.no_grad():
            new_fc1.weight.copy_(model.fc1.weight[idx])
            new_fc1.bias.copy_(model.fc1.bias[idx])
            new_fc2.weight.copy_(model.fc2.weight[:, idx])
            new_fc2.bias.copy_(model.fc2.bias)
        model.fc1, model.fc2 = new_fc1, new_fc2
        return model
