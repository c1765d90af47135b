"""Case 682 - clip_grad_norm_ with error_if_nonfinite after a hand-written BCE overflows

Source: pytorch/pytorch test/test_nn.py, clip_grad_norm_ tests with error_if_nonfinite=True (assertRaisesRegex 'is non-finite, so it cannot be clipped')
Category: numerical / gradient clipping

Reported symptom:
    RuntimeError: The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be clipped. To disable this error and scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`

Root cause:
    The loss is written by hand as -(y*log(sigmoid(z)) + (1-y)*log(1-sigmoid(z))).
    With unnormalised inputs the logits are large, sigmoid saturates to exactly
    1.0 in float32, log(1 - p) is -inf and the backward produces inf/nan
    gradients. clip_grad_norm_(..., error_if_nonfinite=True) then refuses to
    clip a non-finite total norm.

Ground truth a good tool should report:
    The hand-written BCE line (CAUSE) takes log of a saturated sigmoid; use
    F.binary_cross_entropy_with_logits. The error is raised by clip_grad_norm_
    (ERROR).
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)

x = torch.randn(64, 3) * 400.0
y = (x[:, 0] > 0).float().unsqueeze(1)

for step in range(3):
    opt.zero_grad()
    p = torch.sigmoid(model(x))
    loss = -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()  # <- CAUSE
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)  # <- ERROR
    opt.step()
    print("step", step, loss.item())
