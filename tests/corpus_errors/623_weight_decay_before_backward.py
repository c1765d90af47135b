"""Case 623 - manual weight decay applied under no_grad between forward and backward

Source: pytorch/pytorch test/test_autograd.py, test_no_grad_modifies_version (assertRaisesRegex "modified by an inplace operation")
Category: version-counter

Reported symptom:
    RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [8, 1]], which is output 0 of AsStrided, is at version 2; expected version 1 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).

Root cause:
    The loop computes the loss and then, before calling backward, decays every
    parameter in-place inside torch.no_grad(). no_grad only stops recording; it does
    not stop version-counter bumps. The second Linear's weight (seen by autograd as
    the transposed view it saved for the hidden-layer gradient) was saved at forward
    time, so backward finds it modified.

Ground truth a good tool should report:
    The in-place `p.mul_(1 - lr * wd)` under no_grad runs between forward and
    backward; move the decay after loss.backward() (or after opt.step()). Raised at
    loss.backward().
"""
import torch
from torch import nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
lr, wd = 0.05, 1e-2
x = torch.randn(32, 4)
y = x.sum(dim=1, keepdim=True)

for step in range(3):
    loss = nn.functional.mse_loss(model(x), y)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(1 - lr * wd)  # <- CAUSE: weights change before backward
    opt.zero_grad()
    loss.backward()  # <- ERROR
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
