"""Case 622 - deep residual MLP regression (entry point)

Source: pytorch/pytorch test/test_autograd.py, test_inplace (assertRaises RuntimeError after an in-place op on a tensor saved for backward)
Category: version-counter

Reported symptom:
    RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [16, 24]], which is output 0 of Tanh, is at version 1; expected version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).

Root cause:
    layers.py, ResidualTanhBlock.forward adds the skip connection in-place onto the
    tanh output that TanhBackward0 saved for backward.

Ground truth a good tool should report:
    layers.py, the `h += x` line (use `h = h + x`); raised at loss.backward() below.
"""
import torch
import torch.nn.functional as F

from layers import DeepResMLP

torch.manual_seed(0)

model = DeepResMLP()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(16, 10)
y = x[:, :1] * 2.0 - x[:, 1:2]

for epoch in range(3):
    pred = model(x)
    loss = F.mse_loss(pred, y)
    opt.zero_grad()
    loss.backward()  # <- ERROR
    opt.step()
    print(f"epoch {epoch} mse {loss.item():.4f}")
