"""Case 627 - computing a metric with .numpy() on predictions that require grad

Source: pytorch/pytorch test/test_autograd.py, test_numpy_requires_grad (assertRaisesRegex "Can't call numpy() on Tensor that requires grad")
Category: requires-grad

Reported symptom:
    RuntimeError: Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.

Root cause:
    The accuracy is computed with NumPy from `probs`, the sigmoid of the model
    output inside the training loop. `probs` is part of the autograd graph
    (requires_grad=True), and Tensor.numpy() refuses such tensors because the NumPy
    array would silently escape autograd.

Ground truth a good tool should report:
    The accuracy line calling `probs.numpy()`: use probs.detach().numpy() (or compute
    the metric under torch.no_grad()).
"""
import numpy as np
import torch
from torch import nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
x = torch.randn(64, 4)
y = (x[:, 0] + x[:, 1] > 0).float().unsqueeze(1)

for epoch in range(3):
    logits = model(x)
    loss = nn.functional.binary_cross_entropy_with_logits(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    probs = torch.sigmoid(logits)
    acc = np.mean((probs.numpy() > 0.5) == y.numpy())  # <- CAUSE,ERROR
    print(f"epoch {epoch} loss {loss.item():.3f} acc {acc:.2f}")
