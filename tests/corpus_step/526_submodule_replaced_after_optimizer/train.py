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

from model import MLP
from trainer import Finetuner

torch.manual_seed(0)

x = torch.randn(512, 16)
y = (x[:, :4] + 0.1 * torch.randn(512, 4)).argmax(1)

finetuner = Finetuner(MLP())
w_before = finetuner.model.fc1.weight.detach().clone()

for step in range(30):
    idx = torch.randint(0, 512, (64,))
    loss = finetuner.step(x[idx], y[idx])

moved = (finetuner.model.fc1.weight.detach() - w_before).abs().max().item()
print(f"pruned fc1 moved by {moved:.6f}")
print(f"final loss {loss:.4f}")
