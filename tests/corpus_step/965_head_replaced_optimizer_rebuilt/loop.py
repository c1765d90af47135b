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
import torch.nn.functional as F


def fit(model, x, y, steps, lr):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for step in range(steps):
        idx = torch.randint(0, len(x), (64,))
        loss = F.cross_entropy(model(x[idx]), y[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()
