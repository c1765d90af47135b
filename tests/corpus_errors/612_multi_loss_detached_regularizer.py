"""Case 612 - torch.autograd.backward over two losses, one of them built from detached features

Source: pytorch/pytorch test/test_autograd.py, test_multi_backward_no_grad (assertRaises RuntimeError when a root does not require grad)
Category: requires-grad

Reported symptom:
    RuntimeError: element 1 of tensors does not require grad and does not have a grad_fn

Root cause:
    The feature-norm regulariser is computed from feat.detach(), so it is a constant
    with no grad_fn. torch.autograd.backward([ce, reg]) checks every root tensor and
    refuses the second one because it does not require grad.

Ground truth a good tool should report:
    The `reg = feat.detach()...` line: the regulariser must be computed from `feat`
    (not a detached copy) to have a graph; the error is raised at
    torch.autograd.backward([ce, reg]).
"""
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)

encoder = nn.Sequential(nn.Linear(20, 32), nn.ReLU())
head = nn.Linear(32, 4)
opt = torch.optim.Adam(list(encoder.parameters()) + list(head.parameters()), lr=1e-3)

for step in range(3):
    x, y = torch.randn(16, 20), torch.randint(0, 4, (16,))
    feat = encoder(x)
    ce = F.cross_entropy(head(feat), y)
    reg = 1e-3 * feat.detach().pow(2).sum(dim=1).mean()  # <- CAUSE: detached, no graph
    opt.zero_grad()
    torch.autograd.backward([ce, reg])  # <- ERROR
    opt.step()
    print(f"step {step} ce {ce.item():.3f}")
