"""Function 'SqrtBackward0' returned nan values in its 0th output."""

import torch

x = torch.tensor([0.0, 1.0, 4.0], requires_grad=True)
y = torch.sqrt(x)  # <- CAUSE
loss = (y * torch.tensor([0.0, 1.0, 1.0])).sum()
with torch.autograd.detect_anomaly():
    loss.backward()  # <- ERROR
