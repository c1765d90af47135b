"""Case 657 - setting grad_dtype on the half-precision copy instead of the master weight

Source: pytorch/pytorch test/test_autograd.py, test_grad_dtype (assertRaisesRegex "grad_dtype can only be set on leaf tensors")
Category: requires-grad

Reported symptom:
    RuntimeError: grad_dtype can only be set on leaf tensors.
    (preceded, on the same line, by UserWarning: The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. ...)

Root cause:
    In a hand-rolled mixed-precision setup the fp32 master weight is cast to bf16
    for compute (`w_lp = master.to(torch.bfloat16)`), and the script sets
    w_lp.grad_dtype to request fp32 gradients. w_lp is the output of the cast (a
    non-leaf); grad_dtype only exists for leaf tensors, whose .grad autograd fills.

Ground truth a good tool should report:
    The `w_lp.grad_dtype = torch.float32` line: set it on the leaf `master` (or drop
    it: the master's .grad is already fp32).
"""
import torch

torch.manual_seed(0)

master = torch.randn(16, 8, requires_grad=True)
x = torch.randn(4, 8, dtype=torch.bfloat16)
y = torch.randn(4, 16)

for step in range(3):
    w_lp = master.to(torch.bfloat16)
    w_lp.grad_dtype = torch.float32  # <- CAUSE,ERROR
    out = (x @ w_lp.t()).float()
    loss = (out - y).pow(2).mean()
    loss.backward()
    with torch.no_grad():
        master -= 0.01 * master.grad
        master.grad = None
    print(f"step {step} loss {loss.item():.4f}")
