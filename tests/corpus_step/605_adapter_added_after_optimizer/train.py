"""Case 605 - bottleneck adapters are added to the model after the optimizer was built

Source: https://github.com/adapter-hub/adapters/issues/260
        "it looks like the optimizer is missing the adapter parameters"
Category: 2 - every gradient backward produces is consumed

Reported symptom:
    Training a T5 with an adapter in a hand-written loop (no Trainer class) leaves the
    adapter weights exactly as they were initialised; only the head changes.

Root cause:
    The script builds the optimizer from model.parameters() first and only then calls
    model.add_adapter(...) and model.train_adapter(...). add_adapter inserts new
    Adapter modules into every block (a ModuleDict per block), so their parameters did
    not exist when the optimizer collected the list; train_adapter then freezes the
    base. Backward fills the adapters gradients at every step and no optimizer holds
    them.

Ground truth a good tool should report:
    The Adapter modules made by add_adapter (model.py) get gradients that no
    optimizer holds: the optimizer in train.py was built before them. Build the
    optimizer after add_adapter / train_adapter (the lines in train.py).
"""
import torch
import torch.nn.functional as F

from model import Encoder

torch.manual_seed(0)

x = torch.randn(600, 16)
y = (x[:, 0] * x[:, 1] > 0).long() + (x[:, 2] > 0.5).long()

model = Encoder()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)  # <- CAUSE
model.add_adapter("task")  # <- CAUSE
model.train_adapter("task")

for step in range(20):
    idx = torch.randint(0, 600, (64,))
    loss = F.cross_entropy(model(x[idx]), y[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"final loss {loss.item():.4f}")
