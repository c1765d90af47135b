"""Case 653 - reentrant checkpoint used with torch.autograd.grad for an input-gradient penalty

Source: pytorch/pytorch test/test_autograd.py, test_checkpoint_valid_reset_on_error (assertRaisesRegex "torch.utils.checkpoint is incompatible")
Category: checkpoint

Reported symptom:
    RuntimeError: When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` parameter to .backward(). To resolve this error, you can either set use_reentrant=False, or call .backward() without passing the `inputs` argument.

Root cause:
    The encoder block is checkpointed with use_reentrant=True, and the script then
    takes d(score)/d(x) with torch.autograd.grad for a smoothness penalty. The
    reentrant implementation recomputes its forward inside its backward node and
    only supports plain .backward(); autograd.grad is refused.

Ground truth a good tool should report:
    The checkpoint(...) call must use use_reentrant=False; the error is raised at
    the torch.autograd.grad call.
"""
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)

block = nn.Sequential(nn.Linear(8, 32), nn.Softplus(), nn.Linear(32, 8))
head = nn.Linear(8, 1)
opt = torch.optim.Adam([*block.parameters(), *head.parameters()], lr=1e-3)

x = torch.randn(16, 8, requires_grad=True)
y = torch.randn(16, 1)
for step in range(2):
    h = checkpoint(block, x, use_reentrant=True)  # <- CAUSE
    score = head(h)
    (gx,) = torch.autograd.grad(score.sum(), x, create_graph=True)  # <- ERROR
    loss = nn.functional.mse_loss(score, y) + 0.1 * gx.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
