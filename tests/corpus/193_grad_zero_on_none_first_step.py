"""Case 193 - gradients reset by hand before the first backward, when .grad is still None.

Source: a frequent discuss.pytorch.org report (paraphrased): "'NoneType' object has no
attribute 'zero_'" in a hand-written training loop.
Root cause: .grad is None until the first backward fills it; zero it after the update (or
set it to None), not before the first backward.
"""
import torch

torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
x, y = torch.randn(10, 3), torch.randn(10)
for step in range(3):
    w.grad.zero_()  # <- CAUSE
    loss = ((x @ w) - y).pow(2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
