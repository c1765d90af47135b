"""Case 178 - a weight made with requires_grad=True and converted to double on the same
line: the name holds the converted copy, a non-leaf, whose .grad stays None.

Source: a frequent discuss.pytorch.org report (paraphrased): "my tensor's .grad is None".
Root cause: `.double()` after requires_grad=True returns a new tensor; the leaf is lost.
Create it in float64 directly (dtype=torch.float64, requires_grad=True).
"""
import torch

torch.manual_seed(0)
w = torch.randn(3, requires_grad=True).double()  # <- CAUSE
x = torch.randn(10, 3, dtype=torch.float64)
loss = (x @ w).pow(2).mean()
loss.backward()
print(w.grad)  # <- READ
