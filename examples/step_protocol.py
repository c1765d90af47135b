"""A fine-tuning loop with three mistakes in the order of its calls; ``gradprobe diagnose``
reads the loop's backward, zero_grad, clipping and step calls as one timeline and names
each one.

    gradprobe diagnose examples/step_protocol.py

1. The gradients are clipped after every micro-batch of an accumulation window.
2. The backbone is frozen halfway, but SGD's momentum keeps moving it.
3. The last phase forgets ``zero_grad()``: every step applies the sum of all gradients.

The script runs without an error and knows nothing about gradprobe.
"""

import torch
from torch import nn

# expect: phase 3 loss

torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
head = nn.Linear(32, 4)
model = nn.Sequential(backbone, head)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
data = [(torch.randn(8, 16), torch.randint(0, 4, (8,))) for _ in range(8)]
ACCUMULATE = 4


def loss_of(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return nn.functional.cross_entropy(model(x), y)


# phase 1: accumulate over 4 micro-batches
for i, (x, y) in enumerate(data):
    (loss_of(x, y) / ACCUMULATE).backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # after every micro-batch
    if (i + 1) % ACCUMULATE == 0:
        opt.step()
        opt.zero_grad(set_to_none=False)
print("phase 1 done")

# phase 2: train only the head
backbone.requires_grad_(False)
for x, y in data[:4]:
    loss = loss_of(x, y)
    loss.backward()
    opt.step()  # momentum still moves the frozen backbone
    opt.zero_grad(set_to_none=False)
print("phase 2 done")

# phase 3: a few more steps on the head
for x, y in data[:4]:
    loss = loss_of(x, y)
    loss.backward()
    opt.step()  # no zero_grad() after it in this loop
print(f"phase 3 loss {loss.item():.3f}")
