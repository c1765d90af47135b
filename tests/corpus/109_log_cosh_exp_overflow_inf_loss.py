"""Case 109 - log-cosh loss written with exp(): overflow for large residuals -> inf loss, NaN grads

Source: https://github.com/Lightning-AI/torchmetrics/issues/3488
        "LogCoshError returns inf for finite large residuals" (log((exp(d) + exp(-d)) / 2)
        overflows; fixed with logaddexp(d, -d) - log(2); reproduced on PyTorch 2.13.0)
Category: inf-in-forward

Reported symptom:
    Regression with a log-cosh loss: the very first loss is inf, then nan; the gradients
    are NaN.

Root cause:
    The prices are in thousands and were not rescaled, so at initialisation the residuals
    are around -150.  exp(-diff) = exp(150) overflows float32 (limit ~88.7) to inf, the log
    of inf is inf and the mean loss is inf.  In backward LogBackward0 gives grad / inf = 0
    and ExpBackward0 multiplies 0 by exp(150) = inf -> NaN, which reaches every weight.

Ground truth a good tool should report:
    First non-finite value in forward: +inf from torch.exp(-diff) at line 40 (|diff| > 88.7).
    Backward: NaN first produced by ExpBackward0 of line 40; reaches model.2.weight.grad.
    Fix: torch.logaddexp(diff, -diff) - math.log(2) (or softplus form), or rescale targets.
    EXPECT: kind=inf_forward; first_inf_line=40; cause_line=40; nan_node=ExpBackward0;
            nan_node_line=40; affected=2.weight.grad

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        step 0: loss inf, grad NaN: True
        step 1: loss nan, grad NaN: True
        step 2: loss nan, grad NaN: True
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def log_cosh_loss(pred, target):
    diff = pred - target
    return torch.log((torch.exp(diff) + torch.exp(-diff)) / 2).mean()  # <- CAUSE,INF: exp(|diff|) overflows float32 once |diff| > 88.7


# house-price regression; prices are in thousands and were not rescaled
features = torch.randn(64, 6)
prices = 150.0 + 40.0 * features[:, :1] + 20.0 * features[:, 1:2] ** 2

model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(3):
    pred = model(features)
    loss = log_cosh_loss(pred, prices)
    opt.zero_grad()
    loss.backward()
    print(f"step {step}: loss {loss.item()}, "
          f"grad NaN: {torch.isnan(model[2].weight.grad).any().item()}")
    opt.step()
