"""Case 201 - angular (arccos) loss between two views: acos at exactly 1.0 -> NaN gradients

Source: https://github.com/pytorch/pytorch/issues/8069
        "[feature request] About Nan error using acos() function" (the reporter had
        already clamped the input to [-1, 1] and still got NaN; clamping to
        [-1 + eps, 1 - eps] fixed it).  Same report:
        https://github.com/pytorch/pytorch/issues/61810 ("Function 'AcosBackward'
        returned nan values in its 0th output").
Category: nan-in-backward (acos at the boundary of its domain)

Reported symptom:
    No error; the loss is finite, but after the first optimizer step the weights
    and all following losses are NaN.

Root cause:
    The augmentation leaves about half of the samples untouched, so for those rows
    both views go through the network identically and cosine_similarity is exactly
    1.0.  `cos.clamp(-1, 1)` keeps 1.0 (the clamp is a no-op there and passes the
    gradient through), and d acos(x)/dx = -1/sqrt(1 - x^2) = -inf at x = 1.
    -inf times the cosine-similarity backward (which contains zeros) gives NaN, which
    reaches every parameter; SGD then writes NaN into the weights.

Ground truth a good tool should report:
    Forward finite at step 0; the first non-finite gradient is produced by
    AcosBackward0 at the `torch.acos(...)` line for the rows whose cosine is exactly
    1.0 (pairs made identical by `random_jitter`, which keeps the input unchanged).
    Fix: clamp to [-1 + eps, 1 - eps] (or use 1 - cos).
    EXPECT: kind=nan_backward; nan_node=AcosBackward0; cause_line=61; created_line=71

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        step 0: loss=0.0321  rows with cos == 1.0: 4  grad has NaN: True
        step 1: loss=nan  rows with cos == 1.0: 0  grad has NaN: True
        step 2: loss=nan  rows with cos == 1.0: 0  grad has NaN: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Embedder(nn.Module):
    def __init__(self, d_in=16, d_out=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, 32), nn.ReLU(), nn.Linear(32, d_out))

    def forward(self, x):
        return self.net(x)


def random_jitter(x, p=0.5):
    """Add noise to a random subset of the samples; the others pass through unchanged."""
    keep = torch.rand(x.shape[0], 1) < p
    return torch.where(keep, x, x + 0.1 * torch.randn_like(x))


def angular_loss(a, b):
    cos = F.cosine_similarity(a, b, dim=1)
    theta = torch.acos(cos.clamp(-1.0, 1.0))  # <- CAUSE,NAN: acos'(1.0) = -inf
    return theta.mean(), cos


model = Embedder()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
data = torch.randn(16, 16)

for step in range(3):
    view1 = data
    view2 = random_jitter(data)  # <- CREATED: unjittered rows make identical pairs
    loss, cos = angular_loss(model(view1), model(view2))
    optimizer.zero_grad()
    loss.backward()
    has_nan = any(torch.isnan(p.grad).any().item() for p in model.parameters())
    print(f"step {step}: loss={loss.item():.4f}  rows with cos == 1.0: {int((cos == 1.0).sum())}"
          f"  grad has NaN: {has_nan}")
    optimizer.step()
