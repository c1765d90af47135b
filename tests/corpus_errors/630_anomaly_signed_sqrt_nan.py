"""Case 630 - signed square-root normalisation through torch.where gives NaN gradients

Source: pytorch/pytorch test/test_autograd.py, test_anomaly_detect_nan (assertRaisesRegex "Function 'MyFuncBackward' returned nan values in its 0th output.")
Category: anomaly-nan

Reported symptom:
    RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.

Root cause:
    The pooled features go through a "signed sqrt" written as
    torch.where(h >= 0, h.sqrt(), -(-h).sqrt()). Both branches are evaluated on all
    elements, so h.sqrt() runs on negative entries (NaN in forward, masked out by
    where) and (-h).sqrt() on positive ones. In backward the masked branch still
    receives a zero gradient, and 0 * (1 / (2 * sqrt(negative))) = NaN. With anomaly
    detection enabled (the script turns it on to chase NaN weights) the engine
    stops at SqrtBackward0.

Ground truth a good tool should report:
    The torch.where signed-sqrt line: compute it without evaluating sqrt on the
    invalid side, e.g. torch.sign(h) * h.abs().clamp_min(1e-12).sqrt(). Raised at
    loss.backward().
"""
import torch
from torch import nn

torch.manual_seed(0)
torch.autograd.set_detect_anomaly(True)

backbone = nn.Sequential(nn.Linear(10, 32), nn.Tanh())
classifier = nn.Linear(32, 4)
opt = torch.optim.SGD([*backbone.parameters(), *classifier.parameters()], lr=0.1)
x, y = torch.randn(12, 10), torch.randint(0, 4, (12,))

for step in range(3):
    h = backbone(x)
    h = torch.where(h >= 0, h.sqrt(), -(-h).sqrt())  # <- CAUSE
    h = nn.functional.normalize(h, dim=1)
    loss = nn.functional.cross_entropy(classifier(h), y)
    opt.zero_grad()
    loss.backward()  # <- ERROR
    opt.step()
    print(f"step {step} loss {loss.item():.3f}")
