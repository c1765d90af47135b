"""Case 965 - a warm-up phase, then the head is replaced and the optimizer rebuilt (correct)

Source: https://github.com/adapter-hub/adapters/issues/260
        (add the new modules first, then collect the parameters for the optimizer)
Category: correct (invariant 2)
EXPECT: no findings

Reported symptom:
    None. A two-phase fine-tuning trains a model, then swaps its classifier head for
    one with more classes through a helper and builds a new optimizer over the model
    after the swap.

Root cause:
    None. The head replaced after the first optimizer was built is collected by the
    second one, which trains everything that gets a gradient from then on.

Ground truth a good tool should report:
    Nothing.
"""
import torch

from loop import fit
from model import Classifier

torch.manual_seed(0)

x = torch.randn(500, 16)
coarse = (x[:, 0] > 0).long()
fine = coarse * 2 + (x[:, 1] > 0).long()

model = Classifier(n_classes=2)
print(f"coarse loss {fit(model, x, coarse, 10, 1e-2):.4f}")
model.reset_classifier(4)
print(f"fine loss {fit(model, x, fine, 10, 5e-3):.4f}")
