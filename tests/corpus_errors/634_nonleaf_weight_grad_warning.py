"""Case 634 - hand-made weight cast to float64 after creation is not a leaf; .grad stays None

Source: pytorch/pytorch test/test_autograd.py, test_tensor_grad_warnings (warning when accessing .grad of a non-leaf)
Category: requires-grad

Reported symptom:
    UserWarning: The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information. (Triggered internally at ...)

Root cause:
    The data comes from NumPy in float64, so W is created as
    torch.randn(..., requires_grad=True).double(). The cast makes W the output of an
    op (a non-leaf); the actual leaf is the anonymous float32 randn tensor.
    backward() only fills .grad of leaves, so W.grad is None, the manual SGD update
    of W is skipped every step and W never trains; torch warns when W.grad is read.

Ground truth a good tool should report:
    The `W = torch.randn(..., requires_grad=True).double()` line: create W directly
    in float64 (torch.randn(3, 1, dtype=torch.float64, requires_grad=True)). The
    warning is raised where W.grad is read.
"""
import numpy as np
import torch

torch.manual_seed(0)
rng = np.random.default_rng(0)

features = rng.normal(size=(50, 3))
targets = features @ np.array([[1.0], [-2.0], [0.5]]) + 0.3
x, y = torch.from_numpy(features), torch.from_numpy(targets)

W = torch.randn(3, 1, requires_grad=True).double()  # <- CAUSE: W is not a leaf
b = torch.zeros(1, dtype=torch.float64, requires_grad=True)
lr = 0.1

for step in range(5):
    loss = (x @ W + b - y).pow(2).mean()
    loss.backward()
    with torch.no_grad():
        if W.grad is not None:  # <- ERROR
            W -= lr * W.grad
            W.grad = None
        b -= lr * b.grad
        b.grad = None
    print(f"step {step} loss {loss.item():.4f}")
