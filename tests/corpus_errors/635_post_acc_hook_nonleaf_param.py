"""Case 635 - optimizer-in-backward hook registered on a dtype-cast (non-leaf) parameter

Source: pytorch/pytorch test/test_autograd.py, test_post_accumulate_grad_hook_on_non_leaf (assertRaisesRegex "post accumulate grad hooks cannot be registered on non-leaf tensors")
Category: hooks

Reported symptom:
    RuntimeError: post accumulate grad hooks cannot be registered on non-leaf tensors

Root cause:
    The hand-rolled double-precision weights are created as
    torch.randn(..., requires_grad=True).double(). The .double() cast is a
    differentiable op, so each "parameter" is a non-leaf whose gradient is never
    accumulated; register_post_accumulate_grad_hook only exists for leaves.

Ground truth a good tool should report:
    The parameter creation line: create the tensors in float64 and then mark them
    (torch.randn(..., dtype=torch.float64, requires_grad=True)). The error is
    raised at register_post_accumulate_grad_hook.
"""
import torch

torch.manual_seed(0)

weights = [torch.randn(8, 8, requires_grad=True).double() for _ in range(3)]  # <- CAUSE: cast makes non-leaves
lr = 0.01


def sgd_step_in_backward(param):
    with torch.no_grad():
        param -= lr * param.grad
    param.grad = None


for w in weights:
    w.register_post_accumulate_grad_hook(sgd_step_in_backward)  # <- ERROR

x = torch.randn(4, 8, dtype=torch.float64)
for step in range(3):
    h = x
    for w in weights:
        h = torch.tanh(h @ w)
    loss = h.pow(2).mean()
    loss.backward()
    print(f"step {step} loss {loss.item():.4f}")
