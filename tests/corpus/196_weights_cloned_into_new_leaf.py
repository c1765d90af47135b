"""Case 196 - a layer's weight replaced by a normalised copy wrapped in nn.Parameter each
forward: the optimizer's parameter is no longer used.

Source: a frequent discuss.pytorch.org report (paraphrased): "weight normalisation by hand,
the loss does not decrease".
Root cause: `nn.Parameter(...)` in forward makes a fresh leaf each call; the parameter the
optimizer holds stops taking part. Compute the normalised weight as a plain tensor and use
F.linear.
"""
import torch
from torch import nn


class NormLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 3)

    def forward(self, x):
        self.lin.weight = nn.Parameter(self.lin.weight / self.lin.weight.norm(dim=1, keepdim=True))  # <- CAUSE
        return self.lin(x)


torch.manual_seed(0)
model = NormLinear()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    loss = model(torch.randn(8, 6)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(float(loss))
