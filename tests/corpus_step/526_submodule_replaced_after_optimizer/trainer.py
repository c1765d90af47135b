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
import torch.nn.functional as F

from compress import ChannelPruner


class Finetuner:
    def __init__(self, model, lr=0.05):
        self.model = model
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=lr, momentum=0.9)  # <- CREATED
        self.pruner = ChannelPruner(sparsity=0.5)
        self.pruner.speedup(self.model)  # <- CAUSE

    def step(self, x, y):
        loss = F.cross_entropy(self.model(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()
