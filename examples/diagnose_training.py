"""A training loop with three quiet mistakes; ``gradprobe diagnose`` finds all three.

    gradprobe diagnose examples/diagnose_training.py
    gradprobe diagnose --json report.json examples/diagnose_training.py

The script itself runs without an error and knows nothing about gradprobe.
"""

import torch
from torch import nn

# expect: step 3 loss


class Regressor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.head = nn.Linear(16, 1)
        self.aux_head = nn.Linear(16, 1)  # meant for an auxiliary loss, never used

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


torch.manual_seed(0)
model = Regressor()
opt = torch.optim.SGD(model.parameters(), lr=0.05)

running_loss = 0.0
for step in range(4):
    opt.zero_grad()
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    loss = nn.functional.mse_loss(model(x), y)
    running_loss += loss  # keeps every step's graph alive
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.3f}")

probe = torch.ones(4, requires_grad=True).double()
(probe * 2).sum().backward()
print("probe grad:", probe.grad)  # None: probe is not a leaf
