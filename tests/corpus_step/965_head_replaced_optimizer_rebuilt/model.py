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
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, d_in=16, dim=32, n_classes=2):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, dim), nn.ReLU(), nn.Linear(dim, dim), nn.ReLU())
        self.head = nn.Linear(dim, n_classes)

    def forward(self, x):
        return self.head(self.body(x))

    def reset_classifier(self, n_classes):
        self.head = nn.Linear(self.head.in_features, n_classes)
