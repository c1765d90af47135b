"""Case 621 - masking a sigmoid gate in-place after autograd saved it

Source: pytorch/pytorch test/test_autograd.py, test_inplace (assertRaises RuntimeError on backward after z.add_(2))
Category: version-counter

Reported symptom:
    RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [8, 16]], which is output 0 of Sigmoid, is at version 1; expected version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).

Root cause:
    GatedMLP.forward computes gate = sigmoid(...) and then applies the padding mask
    with `gate *= mask`. SigmoidBackward0 saved its output `gate` to compute
    sigmoid' = y * (1 - y); the in-place multiply bumps that tensor's version, and
    backward detects the saved value was overwritten.

Ground truth a good tool should report:
    The in-place `gate *= mask` line (use `gate = gate * mask`); the modified
    tensor is the sigmoid output created on the line above; raised at
    loss.backward().
"""
import torch
from torch import nn

torch.manual_seed(0)


class GatedMLP(nn.Module):
    def __init__(self, dim=12, hidden=16):
        super().__init__()
        self.gate = nn.Linear(dim, hidden)
        self.value = nn.Linear(dim, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x, mask):
        gate = torch.sigmoid(self.gate(x))  # <- CREATED
        gate *= mask  # <- CAUSE
        return self.out(gate * self.value(x))


model = GatedMLP()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x, y = torch.randn(8, 12), torch.randn(8, 1)
mask = (torch.rand(8, 16) > 0.2).float()

for step in range(3):
    loss = nn.functional.mse_loss(model(x, mask), y)
    opt.zero_grad()
    loss.backward()  # <- ERROR
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
