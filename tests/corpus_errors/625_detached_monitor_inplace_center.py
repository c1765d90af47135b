"""Case 625 - centering a detached "monitoring" copy in-place corrupts the saved activation

Source: pytorch/pytorch test/test_autograd.py, test_detach_then_inplace_raises_in_autograd (assertRaisesRegex "has been modified by an inplace")
Category: version-counter

Reported symptom:
    RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [16, 8]], which is output 0 of Tanh, is at version 1; expected version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).

Root cause:
    To log feature statistics the script takes `monitor = feats.detach()` and
    centers it with monitor.sub_(...). detach() returns a tensor sharing storage
    and version counter with `feats`, which TanhBackward0 saved for backward; the
    in-place subtraction overwrites the saved activation.

Ground truth a good tool should report:
    The in-place `monitor.sub_(...)` line: use `feats.detach().clone()` (or an
    out-of-place subtraction); `feats` is created by the tanh line. Raised at
    loss.backward().
"""
import torch
from torch import nn

torch.manual_seed(0)

enc = nn.Linear(6, 8)
head = nn.Linear(8, 1)
opt = torch.optim.SGD([*enc.parameters(), *head.parameters()], lr=0.1)
x, y = torch.randn(16, 6), torch.randn(16, 1)

for step in range(3):
    feats = torch.tanh(enc(x))  # <- CREATED
    monitor = feats.detach()
    monitor.sub_(monitor.mean(dim=0))  # <- CAUSE: shares storage with feats
    spread = monitor.abs().mean().item()
    loss = nn.functional.mse_loss(head(feats), y)
    opt.zero_grad()
    loss.backward()  # <- ERROR
    opt.step()
    print(f"step {step} loss {loss.item():.4f} feature spread {spread:.3f}")
