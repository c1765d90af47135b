"""Case 622 - residual connection added in-place onto a tanh output (layers module)

Source: pytorch/pytorch test/test_autograd.py, test_inplace (assertRaises RuntimeError after an in-place op on a tensor saved for backward)
Category: version-counter

Reported symptom:
    RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [16, 24]], which is output 0 of Tanh, is at version 1; expected version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).

Root cause:
    ResidualTanhBlock.forward computes h = tanh(fc(x)) and then adds the skip
    connection in-place with `h += x`. TanhBackward0 saved its output h (tanh' =
    1 - y^2); the in-place add overwrites it and bumps its version, which backward
    detects.

Ground truth a good tool should report:
    The `h += x` line in ResidualTanhBlock.forward (write `h = h + x`); h is created
    by the tanh line just above; the error is raised at loss.backward() in train.py.
"""
import torch
from torch import nn


class ResidualTanhBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        h = torch.tanh(self.fc(x))  # <- CREATED
        h += x  # <- CAUSE
        return self.proj(h)


class DeepResMLP(nn.Module):
    def __init__(self, in_dim=10, dim=24, depth=3, out_dim=1):
        super().__init__()
        self.stem = nn.Linear(in_dim, dim)
        self.blocks = nn.ModuleList([ResidualTanhBlock(dim) for _ in range(depth)])
        self.out = nn.Linear(dim, out_dim)

    def forward(self, x):
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        return self.out(x)
